/**
 * A manifest's calls and undos start their handler processes with the `CommandExecutor` that
 * `Manifest.layer` was built with (`Manifest.ManifestProcesses`), whatever the program's context
 * holds: a program given `NodeContext.layer` only through the layer runs, where its calls failed
 * (`no CommandExecutor to start it with`) though it compiled.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as CommandExecutor from "@effect/platform/CommandExecutor"
import { NodeContext } from "@effect/platform-node"
import { afterAll, assert, describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Approval, Journal, Manifest, Outcome, Saga, Toolkit } from "../src/index.js"
import { loadToolkit, readWorld, reservationBindings, writeManifest } from "./fixtures/manifest-tools.js"

const root = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-manifest-processes-"))
afterAll(() => fs.rmSync(root, { recursive: true, force: true }))
let folders = 0
const freshDir = () => path.join(root, `case-${++folders}`)

/** Node's executor, counting the processes it starts. */
const countingExecutor = () => {
  const started = { count: 0 }
  const layer = Layer.effect(
    CommandExecutor.CommandExecutor,
    Effect.map(CommandExecutor.CommandExecutor, (node) =>
      CommandExecutor.makeExecutor((command) =>
        Effect.zipRight(
          Effect.sync(() => started.count++),
          node.start(command)
        )
      )
    )
  ).pipe(Layer.provide(NodeContext.layer))
  return { started, layer }
}

/** The saga's services, the manifest's layer built with `executor`: nothing else holds one. */
const servicesWith = <E>(
  toolkit: Manifest.ManifestToolkit,
  executor: Layer.Layer<CommandExecutor.CommandExecutor, E>
) =>
  Manifest.layer(toolkit).pipe(
    Layer.provide(executor),
    Layer.provideMerge(Saga.layer),
    Layer.provideMerge(Layer.merge(Journal.layerMemory, Approval.layerMemory))
  )

/** A reservation, then a failure: the saga compensates, releasing it. */
const reserveThenFail = (toolkit: Manifest.ManifestToolkit) =>
  Effect.zipRight(
    Toolkit.call(toolkit, "createReservation", { sku: "A-1", quantity: 1 }),
    Outcome.failed("payment declined")
  )

describe("the executor Manifest.layer was built with", () => {
  it.live("starts the calls and the undos of a program whose own context holds none", () =>
    Effect.gen(function* () {
      const dir = freshDir()
      const world = path.join(dir, "world.ndjson")
      const toolkit = yield* loadToolkit(writeManifest(dir, reservationBindings(world)))
      const services = servicesWith(toolkit, NodeContext.layer)
      const completed = yield* Effect.provide(
        Saga.run("order-1", Toolkit.call(toolkit, "createReservation", { sku: "A-1", quantity: 1 })),
        services
      )
      expect(completed).toEqual({ _tag: "Completed", sagaId: "order-1", value: { reservationId: "res-1" } })

      const compensated = yield* Effect.provide(Saga.run("order-2", reserveThenFail(toolkit)), services)
      assert(compensated._tag === "Compensated")
      expect(compensated.report.undone).toEqual([
        expect.objectContaining({ toolName: "createReservation", outcome: "completed" })
      ])
      expect(readWorld(world).map((event) => event.event)).toEqual(["created", "created", "released"])
    })
  )

  it.live("is the one a call and its undo use, not another the program's context holds", () =>
    Effect.gen(function* () {
      const dir = freshDir()
      const world = path.join(dir, "world.ndjson")
      const toolkit = yield* loadToolkit(writeManifest(dir, reservationBindings(world)))
      const { started, layer } = countingExecutor()
      const result = yield* Effect.provide(
        Saga.run("order-1", reserveThenFail(toolkit)),
        servicesWith(toolkit, layer)
      ).pipe(Effect.provide(NodeContext.layer))
      expect(result._tag).toBe("Compensated")
      expect(readWorld(world).map((event) => event.event)).toEqual(["created", "released"])
      expect(started.count).toBe(2)
    })
  )

  it.live("starts the undo an operator's Saga.compensate runs, in a command whose context holds none", () =>
    Effect.gen(function* () {
      const dir = freshDir()
      const world = path.join(dir, "world.ndjson")
      const toolkit = yield* loadToolkit(writeManifest(dir, reservationBindings(world)))
      const report = yield* Effect.gen(function* () {
        const completed = yield* Saga.run(
          "order-1",
          Toolkit.call(toolkit, "createReservation", { sku: "B", quantity: 1 })
        )
        expect(completed._tag).toBe("Completed")
        return yield* Saga.compensate("order-1")
      }).pipe(Effect.provide(servicesWith(toolkit, NodeContext.layer)))
      expect(report.status).toBe("compensated")
      expect(readWorld(world).map((event) => event.event)).toEqual(["created", "released"])
    })
  )
})
