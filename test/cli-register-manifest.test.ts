/**
 * `--register` of a module exporting a manifest's toolkit (`Manifest.toolkit`): the CLI runs the
 * boot checks `Manifest.layer` runs, so that a typo in the manifest (a command that is not there)
 * stops `compensate` before it undoes anything, instead of failing the refund half-way. The CLI runs
 * in this process, on an SQLite file the saga ran on.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { NodeContext } from "@effect/platform-node"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Journal, Manifest, Saga, SqlStore, Toolkit } from "../src/index.js"
import { cliInProcess } from "./fixtures/cli-in-process.js"
import { loadToolkit, readWorld, reservationBindings, writeManifest } from "./fixtures/manifest-tools.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-cli-manifest-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))
const fixtures = fileURLToPath(new URL("./fixtures/", import.meta.url))

/** A module exporting the toolkit of the manifest at `manifest`, as an operator's `tools.ts` would. */
const toolsModule = (name: string, manifest: string): string => {
  const file = path.join(dir, `${name}.ts`)
  fs.writeFileSync(
    file,
    `import { toolkitAt } from ${JSON.stringify(path.join(fixtures, "manifest-saga.ts"))}\nexport const reservations = toolkitAt(${JSON.stringify(manifest)})\n`
  )
  return file
}

/** Runs one reservation to completion on the SQLite file `db`, with the toolkit's layer. */
const reserve = (db: string, toolkit: Manifest.ManifestToolkit) =>
  Effect.scoped(
    Saga.run("order-1", Toolkit.call(toolkit, "createReservation", { sku: "A", quantity: 1 })).pipe(
      Effect.provide(
        Manifest.layer(toolkit).pipe(
          Layer.provideMerge(Saga.layer),
          Layer.provideMerge(Layer.merge(SqlStore.layerSqlite({ filename: db }), NodeContext.layer))
        )
      )
    )
  )

const revisionOf = (db: string) =>
  Effect.scoped(
    Effect.map(
      Effect.flatMap(Journal.Journal, (journal) => journal.read("order-1")),
      (entries) => entries.length
    ).pipe(Effect.provide(SqlStore.layerSqlite({ filename: db })))
  )

describe("effect-saga compensate --register with a manifest's toolkit", { timeout: 60_000 }, () => {
  it.live("a manifest whose inverse's command is missing is refused before anything is undone or written", () =>
    Effect.gen(function* () {
      const world = path.join(dir, "world.ndjson")
      const db = path.join(dir, "sagas.db")
      const good = writeManifest(path.join(dir, "good"), reservationBindings(world))
      const completed = yield* reserve(db, yield* loadToolkit(good))
      expect(completed._tag).toBe("Completed")
      const written = yield* revisionOf(db)

      const bindings = reservationBindings(world)
      bindings.releaseReservation.handler.command = path.join(dir, "no-such-node")
      const typo = toolsModule("typo", writeManifest(path.join(dir, "typo"), bindings))
      const refused = yield* cliInProcess("compensate", "order-1", "--register", typo, "--db", db)
      expect(refused.code).toBe(2)
      expect(refused.stdout).toBe("")
      expect(refused.stderr).toMatch(
        new RegExp(
          `^effect-saga: --register ${typo}: its manifest ${path.join(dir, "typo", "tools.manifest.json")} at \\$\\.bindings\\.releaseReservation\\.handler\\.command: `
        )
      )
      expect(yield* revisionOf(db)).toBe(written)
      expect(readWorld(world).map((event) => event.event)).toEqual(["created"])

      const compensated = yield* cliInProcess(
        "compensate",
        "order-1",
        "--register",
        toolsModule("tools", good),
        "--db",
        db
      )
      expect(compensated.code).toBe(0)
      expect(readWorld(world).map((event) => event.event)).toEqual(["created", "released"])
    })
  )
})
