/**
 * A tool's schema whose own code throws (a `transform` that throws instead of failing) is bad input
 * like any other: a typed error, nothing run or lost; never a defect in the middle of a run or an
 * undo that leaves the saga half-compensated.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { Compensable, Saga, Toolkit } from "../src/index.js"
import * as Testing from "../src/Testing.js"
import { entriesOf } from "./fixtures/journal-reads.js"

/** A string schema whose decode or encode throws on any text containing "bad". */
const throwing = (where: "decode" | "encode") =>
  Schema.transform(Schema.String, Schema.String, {
    strict: true,
    decode: (text) => {
      if (where === "decode" && text.includes("bad")) throw new Error(`${where} threw`)
      return text
    },
    encode: (text) => {
      if (where === "encode" && text.includes("bad")) throw new Error(`${where} threw`)
      return text
    }
  })

const phasesOf = (sagaId: string) => Effect.map(entriesOf(sagaId), (entries) => entries.map((entry) => entry.phase))

describe("schemas that throw", () => {
  it.effect("an input whose encode throws fails the call with InvalidInput; nothing is journaled for it", () =>
    Effect.gen(function* () {
      const calls: Array<string> = []
      const note = Compensable.make({
        name: "note",
        input: throwing("encode"),
        success: Schema.String,
        execute: (text) => Effect.sync(() => calls.push(text)).pipe(Effect.as(text)),
        compensate: () => Effect.void
      })
      const result = yield* Saga.run("encode-throws", Effect.flip(note("bad input")))
      assert(result._tag === "Completed")
      expect(result.value).toMatchObject({ _tag: "InvalidInput", toolName: "note" })
      expect((result.value as { reason: string }).reason).toContain("its schema threw: Error: encode threw")
      expect(calls).toEqual([])
      expect(yield* phasesOf("encode-throws")).toEqual(["SAGA_STARTED", "SAGA_COMPLETED"])
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("Toolkit.call with arguments whose decode throws fails with InvalidInput", () =>
    Effect.gen(function* () {
      const tool = Compensable.make({
        name: "t",
        input: throwing("decode"),
        success: Schema.String,
        execute: (text) => Effect.succeed(text),
        compensate: () => Effect.void
      })
      const toolkit = Toolkit.make({ t: tool })
      const result = yield* Saga.run("call-throws", Effect.flip(Toolkit.call(toolkit, "t", "bad-arg")))
      assert(result._tag === "Completed")
      expect(result.value).toMatchObject({ _tag: "InvalidInput", toolName: "t" })
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect(
    "a journaled result whose decode throws ends the compensation failed for that step, and the others are undone",
    () =>
      Effect.gen(function* () {
        const undone: Array<string> = []
        const first = Compensable.make({
          name: "first",
          input: Schema.String,
          success: Schema.String,
          execute: (text) => Effect.succeed(text),
          compensate: (ctx) => Effect.sync(() => undone.push(`first ${ctx.result}`))
        })
        const second = Compensable.make({
          name: "second",
          input: Schema.String,
          success: throwing("decode"),
          execute: () => Effect.succeed("bad result"),
          compensate: (ctx) => Effect.sync(() => undone.push(`second ${ctx.result}`))
        })
        const result = yield* Saga.run(
          "decode-throws",
          Effect.zipRight(Effect.zipRight(first("a"), second("b")), Effect.fail("the program failed"))
        )
        assert(result._tag === "CompensationFailed")
        expect(undone).toEqual(["first a"])
        const failed = result.report.undone.find((step) => step.toolName === "second")!
        expect(failed.outcome).toBe("failed")
        expect(failed.detail).toContain("its schema threw: Error: decode threw")
        expect((yield* Saga.status("decode-throws")).status).toBe("compensation_failed")
        // Asked again, it answers from the journal: nothing dies, nothing runs twice.
        expect((yield* Saga.compensate("decode-throws")).status).toBe("compensation_failed")
        expect(undone).toEqual(["first a"])
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("a resume that replays a result whose decode throws fails with JournalCorrupted", () =>
    Effect.gen(function* () {
      const tool = Compensable.make({
        name: "replayed",
        input: Schema.String,
        success: throwing("decode"),
        execute: () => Effect.succeed("bad result"),
        compensate: () => Effect.void
      })
      const waiting = Effect.zipRight(tool("x"), Effect.interrupt)
      expect((yield* Saga.run("replay-throws", waiting))._tag).toBe("Suspended")
      const error = yield* Effect.flip(Saga.run("replay-throws", tool("x")))
      expect(error).toMatchObject({ _tag: "JournalCorrupted", sagaId: "replay-throws" })
      expect(error.message).toContain("its schema threw: Error: decode threw")
      expect((yield* Saga.status("replay-throws")).status).toBe("suspended")
    }).pipe(Effect.provide(Testing.layer))
  )
})
