/**
 * `Journal.importNdjson` accepts exactly the ids and times the engine journals: whatever a saga and
 * an explicit undo's run wrote imports into another store (the refusals are in the conformance
 * suite, `JournalSuite.ts`).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { Compensable, Journal, Saga } from "../src/index.js"
import * as Testing from "../src/Testing.js"

describe("an import of what the engine journaled", () => {
  it.effect(
    "a saga's export, with a key of its caller's and a tool named with ':', and an explicit undo's run import",
    () =>
      Effect.gen(function* () {
        yield* Saga.run("trip/1", Effect.zipRight(book("room-12", { key: "a:b#c" }), book("room-14")))
        const step = (yield* Saga.status("trip/1")).steps[0]!
        expect(step.stepId).toBe("ns:book:a:b#c#1")
        const undo = yield* Saga.compensateEffect(step.effectId)
        expect(undo).toMatchObject({ outcome: "completed", runId: "trip/1/ns:book:a:b#c#1/compensate-effect" })
        const exports = yield* Effect.forEach(["trip/1", undo.runId], Journal.exportNdjson)
        const imported = yield* Effect.forEach(exports, (text) =>
          Effect.provide(Journal.importNdjson(text), Journal.layerMemory)
        )
        expect(imported.map((record) => record.sagaId)).toEqual(["trip/1", undo.runId])
      }).pipe(Effect.provide(Testing.layer))
  )
})

const book = Compensable.make({
  name: "ns:book",
  input: Schema.String,
  success: Schema.String,
  execute: (room) => Effect.succeed(`booking-${room}`),
  compensate: () => Effect.void
})
