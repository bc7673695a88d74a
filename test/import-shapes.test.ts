/**
 * `Journal.importNdjson` accepts exactly the ids and times the engine journals: whatever a saga and
 * an explicit undo's run wrote imports into another store (the refusals are in the conformance
 * suite, `JournalSuite.ts`).
 */
import { assert, describe, expect, it } from "@effect/vitest"
import { Effect, Schema, TestClock } from "effect"
import { Compensable, Journal, Saga } from "../src/index.js"
import * as Testing from "../src/Testing.js"
import { entriesOf } from "./fixtures/journal-reads.js"

describe("an import of what the engine journaled", () => {
  it.effect(
    "a saga's export, with a key of its caller's and a tool named with ':', and an explicit undo's run import",
    () =>
      Effect.gen(function* () {
        yield* Saga.run("trip/1", Effect.zipRight(book("room-12", { key: "a:b#c" }), book("room-14")))
        const step = (yield* Saga.status("trip/1")).steps[0]!
        expect(step.stepId).toBe("ns%3Abook:a:b#c#1")
        const undo = yield* Saga.compensateEffect(step.effectId)
        expect(undo).toMatchObject({ outcome: "completed", runId: "trip/1/ns%3Abook:a:b#c#1/compensate-effect" })
        const exports = yield* Effect.forEach(["trip/1", undo.runId], Journal.exportNdjson)
        const imported = yield* Effect.forEach(exports, (text) =>
          Effect.provide(Journal.importNdjson(text), Journal.layerMemory)
        )
        expect(imported.map((record) => record.sagaId)).toEqual(["trip/1", undo.runId])
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect(
    "what is not text (a JavaScript caller's number, null, a Buffer) is refused as no journal, not a defect",
    () =>
      Effect.gen(function* () {
        for (const [given, name] of [
          [42, "a number"],
          [null, "null"],
          [Buffer.from("{}"), "an object"]
        ] as const) {
          const refused = yield* Effect.flip(Journal.importNdjson(given as unknown as string))
          expect(refused).toMatchObject({
            _tag: "JournalCorrupted",
            sagaId: "",
            seq: 1,
            reason: `the import is not text but ${name}`
          })
        }
        expect(yield* Journal.Journal.pipe(Effect.flatMap((journal) => journal.list()))).toEqual([])
      }).pipe(Effect.provide(Journal.layerMemory))
  )

  it.effect(
    "a line that is no entry says which field and why, never a value that may be a secret, nor a line's text",
    () =>
      Effect.gen(function* () {
        yield* Saga.run("hacked", book("room-12"))
        const [first, ...rest] = (yield* Journal.exportNdjson("hacked")).split("\n")
        const entry = JSON.parse(first!)
        const importing = (line: string) =>
          Effect.flip(Effect.provide(Journal.importNdjson([line, ...rest].join("\n")), Journal.layerMemory))
        expect(yield* importing(JSON.stringify({ ...entry, phase: "HACKED" }))).toMatchObject({
          reason: 'line 1 is not a journal entry: phase "HACKED" is not a known phase'
        })
        const secret = yield* importing(JSON.stringify({ ...entry, payload: { receipt: "rcpt-secret-9" } }))
        expect(secret).toMatchObject({
          reason: "line 1 is not a journal entry: payload (an object) is not text or null"
        })
        const notJson = yield* importing('{"receipt":"rcpt-secret-9"')
        expect(notJson).toMatchObject({ reason: "line 1 is not a journal entry: it is not JSON" })
        for (const [line, kind] of [
          ["[]", "an array"],
          ["42", "a number"],
          ["null", "null"],
          ['"rcpt-secret-9"', "a string"]
        ] as const) {
          expect(yield* importing(line)).toMatchObject({
            reason: `line 1 is not a journal entry: it is ${kind}, not an object`
          })
        }
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect(
    "a field no entry or end line has is refused with its line, not dropped: the import would not be the file given",
    () =>
      Effect.gen(function* () {
        yield* Saga.run("extra", book("room-12"))
        const lines = (yield* Journal.exportNdjson("extra")).trimEnd().split("\n")
        const importing = (at: number, line: string) =>
          Effect.flip(
            Effect.provide(
              Journal.importNdjson(lines.map((each, index) => (index === at ? line : each)).join("\n")),
              Journal.layerMemory
            )
          )
        const entry = JSON.parse(lines[1]!)
        expect(yield* importing(1, JSON.stringify({ ...entry, extra: "injected" }))).toMatchObject({
          _tag: "JournalCorrupted",
          seq: 2,
          reason: 'line 2 is not a journal entry: it has a field no entry has, "extra", which an import would not keep'
        })
        const last = lines.length - 1
        const end = JSON.parse(lines[last]!)
        for (const [edited, field] of [
          [{ ...end, note: "x" }, "note"],
          [{ exportEnd: { ...end.exportEnd, extra: 1 } }, "extra"]
        ] as const) {
          expect(yield* importing(last, JSON.stringify(edited))).toMatchObject({
            _tag: "JournalCorrupted",
            seq: last + 1,
            reason: `line ${last + 1} is the export's end line with a field an end line does not have, "${field}", which an import would not keep`
          })
        }
        // The file as exported imports.
        const imported = yield* Effect.provide(
          Effect.zip(
            Journal.importNdjson(lines.join("\n")),
            Journal.Journal.pipe(Effect.flatMap((journal) => journal.list()))
          ),
          Journal.layerMemory
        )
        expect(imported[1].map((record) => record.sagaId)).toEqual(["extra"])
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect(
    "a saga whose entries' times go back (its writer's clock stepped back) imports: times are not its order",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(Date.parse("2026-03-01T12:00:00.000Z"))
        const waiting = yield* Saga.run("stepped-back", Effect.zipRight(book("room-12"), pay(40)))
        assert(waiting._tag === "AwaitingApproval")
        // The clock steps back an hour (NTP, or an operator on a host whose clock is behind).
        yield* TestClock.setTime(Date.parse("2026-03-01T11:00:00.000Z"))
        yield* Saga.reject("stepped-back", waiting.request.stepId, { by: "alice", reason: "no" })
        const times = (yield* entriesOf("stepped-back")).map((entry) => entry.at)
        expect(times.some((at, index) => index > 0 && at < times[index - 1]!)).toBe(true)
        const text = yield* Journal.exportNdjson("stepped-back")
        const imported = yield* Effect.provide(Journal.importNdjson(text), Journal.layerMemory)
        expect(imported).toMatchObject({ sagaId: "stepped-back", status: "compensated", revision: times.length })
      }).pipe(Effect.provide(Testing.layer))
  )
})

const pay = Compensable.make({
  name: "pay",
  input: Schema.Number,
  success: Schema.String,
  reversibility: "irreversible",
  execute: (amount) => Effect.succeed(`paid-${amount}`)
})

const book = Compensable.make({
  name: "ns:book",
  input: Schema.String,
  success: Schema.String,
  execute: (room) => Effect.succeed(`booking-${room}`),
  compensate: () => Effect.void
})
