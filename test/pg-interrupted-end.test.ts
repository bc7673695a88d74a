/**
 * A run interrupted while a step's held-back EXECUTED is being written alone (PostgreSQL writes it
 * in a fiber of its own once the program waits) still journals how it ended: SAGA_SUSPENDED, or its
 * compensation with onInterrupt: "compensate". Waiting for the writer's lock no longer lets the
 * interruption in.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer, Option, Schema } from "effect"
import { Compensable, Journal, Saga } from "../src/index.js"
import * as Postgres from "../src/Postgres.js"
import { freshDatabase } from "./fixtures/postgres.js"

const url = await freshDatabase("effect_saga_interrupted_end")

const step = Compensable.make({
  name: "step",
  input: Schema.Struct({ n: Schema.Number }),
  success: Schema.String,
  execute: () => Effect.succeed("ok"),
  compensate: () => Effect.void
})

/** One step, then a wait that is never over: the program yields, and the step's EXECUTED is written alone. */
const program = (stepped: Deferred.Deferred<void>) =>
  Effect.gen(function* () {
    yield* step({ n: 1 })
    yield* Deferred.succeed(stepped, undefined)
    return yield* Effect.never
  })

const statusAfterInterrupt = (sagaId: string, options?: Saga.RunOptions) =>
  Effect.gen(function* () {
    const stepped = yield* Deferred.make<void>()
    const run = yield* Effect.fork(Saga.run(sagaId, program(stepped), options))
    yield* Deferred.await(stepped)
    yield* Fiber.interrupt(run)
    const journal = yield* Journal.Journal
    return Option.getOrThrow(yield* journal.get(sagaId))
  })

describe("a run interrupted while its held-back EXECUTED is written, on PostgreSQL", () => {
  it.live("always journals SAGA_SUSPENDED, or compensates as asked, and holds no lease", () =>
    Effect.gen(function* () {
      for (let round = 0; round < 20; round++) {
        const suspended = yield* statusAfterInterrupt(`suspended-${round}`)
        expect(suspended).toMatchObject({ status: "suspended", lease: null })
        const compensated = yield* statusAfterInterrupt(`compensated-${round}`, { onInterrupt: "compensate" })
        expect(compensated).toMatchObject({ status: "compensated", lease: null })
      }
    }).pipe(
      Effect.provide(Saga.layerWith({ owner: "w" }).pipe(Layer.provideMerge(Postgres.layer({ url })))),
      Effect.scoped
    )
  )
})
