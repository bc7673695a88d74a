/**
 * Tools from a manifest: a booking saga whose steps are handler processes (plain Node scripts in
 * ./handlers) bound by ./tools.manifest.json. The payment fails, so the reservation the first
 * handler made is released by the second, with the receipt the first one answered.
 *
 *   npx tsx examples/manifest/main.ts
 *
 * The handlers import `effect-saga/handler` from this package's build (`npm run build`).
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { NodeContext } from "@effect/platform-node"
import { ConfigProvider, Effect, Layer } from "effect"
import { Approval, Journal, Manifest, Outcome, Saga, Toolkit } from "effect-saga"

const here = path.dirname(fileURLToPath(import.meta.url))
const workDir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-manifest-"))
const reservationsFile = path.join(workDir, "reservations.json")

const booking = (toolkit: Manifest.ManifestToolkit) =>
  Effect.gen(function* () {
    const reservation = yield* Toolkit.call(toolkit, "createReservation", { room: "sea-view", nights: 2 })
    yield* Effect.log(`reserved: ${JSON.stringify(reservation)}`)
    return yield* Outcome.failed("the card was declined")
  })

const program = Effect.gen(function* () {
  const manifest = yield* Manifest.load(path.join(here, "tools.manifest.json"))
  const toolkit = Manifest.toolkit(manifest)
  const services = Manifest.layer(toolkit).pipe(
    Layer.provideMerge(Saga.layer),
    Layer.provideMerge(Layer.merge(Journal.layerMemory, Approval.layerMemory))
  )
  const result = yield* Effect.provide(Saga.run("booking-1", booking(toolkit)), services)
  console.log(result._tag, result._tag === "Compensated" ? JSON.stringify(result.report.undone) : "")
  console.log(fs.readFileSync(reservationsFile, "utf8"))
  if (result._tag !== "Compensated") process.exitCode = 1
})

// The secret comes from your configuration (here a map; by default the environment), and the
// reservations file reaches the handlers through the `env:RESERVATIONS_FILE` grant.
const config = ConfigProvider.fromMap(
  new Map([
    ["RESERVATION_API_TOKEN", "demo-token"],
    ["RESERVATIONS_FILE", reservationsFile]
  ])
)

Effect.runPromise(
  program.pipe(
    Effect.withConfigProvider(config),
    Effect.provide(NodeContext.layer),
    // The reservations file holds the provider's receipt: it does not outlive the example.
    Effect.ensuring(Effect.sync(() => fs.rmSync(workDir, { recursive: true, force: true })))
  )
)
