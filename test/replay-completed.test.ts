/**
 * A run of a completed or compensated saga replays it and writes nothing, not even a lease: on
 * every store, two replays at once both answer, and the saga's row holds no lease while one is
 * under way.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer, Option, Ref } from "effect"
import { Journal, Saga } from "../src/index.js"
import { countingTool } from "./fixtures/counting-tool.js"
import { threeStores } from "./fixtures/three-stores.js"

const stores = await threeStores("effect-saga-replay")

/** Two steps, then `hold`, then the end: success, or a failure that compensates the saga. */
const program = (calls: Ref.Ref<number>, ending: "completed" | "compensated", hold: Effect.Effect<void>) =>
  Effect.gen(function* () {
    const first = yield* countingTool("reserve", calls)({ n: 1 })
    const second = yield* countingTool("charge", calls)({ n: 2 })
    yield* hold
    if (ending === "compensated") return yield* Effect.fail("declined")
    return `${first}+${second}`
  })

for (const [name, store] of stores) {
  describe(`a finished saga's replay writes nothing: ${name}`, () => {
    for (const [ending, tag, revision] of [
      ["completed", "Completed", 6],
      ["compensated", "Compensated", 11]
    ] as const) {
      it.live(
        `${ending}: two workers replay it at once, both answer, no tool or undo runs again, no lease is taken`,
        () =>
          Effect.gen(function* () {
            const sagaId = `replayed-${Math.random().toString(36).slice(2)}`
            const calls = yield* Ref.make(0)
            const a = yield* Layer.build(Saga.layerWith({ owner: "worker-a" }))
            const b = yield* Layer.build(Saga.layerWith({ owner: "worker-b" }))
            const first = yield* Saga.run(sagaId, program(calls, ending, Effect.void)).pipe(Effect.provide(a))
            expect(first._tag).toBe(tag)

            const inside = yield* Deferred.make<void>()
            const release = yield* Deferred.make<void>()
            const hold = Effect.zipRight(Deferred.succeed(inside, undefined), Deferred.await(release))
            const replaying = yield* Effect.fork(Saga.run(sagaId, program(calls, ending, hold)).pipe(Effect.provide(a)))
            yield* Deferred.await(inside)
            const journal = yield* Journal.Journal
            const record = Option.getOrThrow(yield* journal.get(sagaId))
            expect(record).toMatchObject({ status: ending, revision, lease: null })
            expect(yield* Saga.run(sagaId, program(calls, ending, Effect.void)).pipe(Effect.provide(b))).toEqual(first)
            yield* Deferred.succeed(release, undefined)
            expect(yield* Fiber.join(replaying)).toEqual(first)
            expect(yield* Ref.get(calls)).toBe(2)
            expect(Option.getOrThrow(yield* journal.get(sagaId))).toEqual(record)
          }).pipe(Effect.scoped, Effect.provide(store()))
      )
    }
  })
}
