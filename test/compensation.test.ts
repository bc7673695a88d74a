import { createHash } from "node:crypto"
import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { Approval, Compensable, Journal, Outcome, Saga, SagaError } from "../src/index.js"
import * as Testing from "../src/Testing.js"
import { entriesOf, phasesOf } from "./fixtures/journal-reads.js"

describe("compensation", () => {
  it.effect("undoes executed steps in strict reverse order and never undoes the step that failed", () =>
    Effect.gen(function* () {
      const { step, failing, undone } = fixture()
      const result = yield* Saga.run(
        "s1",
        Effect.gen(function* () {
          yield* step({ name: "a" })
          yield* step({ name: "b" })
          yield* step({ name: "c" })
          yield* failing({ name: "d" })
        })
      )
      expect(result._tag).toBe("Compensated")
      if (result._tag !== "Compensated") return
      expect(undone).toEqual(["c", "b", "a"])
      expect(result.report.undone.map((s) => [s.toolName, s.outcome])).toEqual([
        ["step", "completed"],
        ["step", "completed"],
        ["step", "completed"]
      ])
      expect(result.report.notUndone).toEqual([{ stepId: idOf("failing", "d"), toolName: "failing", phase: "FAILED" }])
      expect(yield* phasesOf("s1", idOf("failing", "d"))).toEqual(["INTENT", "FAILED"])
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect(
    "a step declared changesNothing needs no undo: compensation passes over it, writing and reporting nothing",
    () =>
      Effect.gen(function* () {
        const { failing, step, undone } = fixture()
        const read = Compensable.make({
          name: "read",
          input: Schema.String,
          success: Schema.String,
          changesNothing: true,
          execute: (sku) => Effect.succeed(`stock of ${sku}: 3`)
        })
        const result = yield* Saga.run(
          "reads",
          Effect.gen(function* () {
            yield* step({ name: "a" })
            yield* read("A-1")
            yield* failing({ name: "b" })
          })
        )
        expect(result._tag).toBe("Compensated")
        if (result._tag !== "Compensated") return
        expect(undone).toEqual(["a"])
        expect(result.report.undone.map((s) => s.toolName)).toEqual(["step"])
        const readEntries = (yield* entriesOf("reads")).filter((entry) => entry.toolName === "read")
        expect(readEntries.map((entry) => entry.phase)).toEqual(["INTENT", "EXECUTED"])
        expect(JSON.parse(readEntries[1]!.payload!)).toEqual({ result: "stock of A-1: 3", changesNothing: true })
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("an undo's declared capabilities are journaled with its COMPENSATING, before it runs; none, none", () =>
    Effect.gen(function* () {
      const make = (name: string, undoCapabilities?: ReadonlyArray<string>) =>
        Compensable.make({
          name,
          input: Schema.String,
          success: Schema.String,
          ...(undoCapabilities === undefined ? {} : { undoCapabilities }),
          execute: (id) => Effect.succeed(`${name}-${id}`),
          compensate: () => Effect.void
        })
      const granted = make("granted", ["network", "env:REFUND_URL"])
      const plain = make("plain", [])
      const result = yield* Saga.run(
        "caps",
        Effect.zipRight(Effect.zipRight(granted("a"), plain("b")), Effect.fail("no"))
      )
      expect(result._tag).toBe("Compensated")
      const compensating = (yield* entriesOf("caps")).filter((entry) => entry.phase === "COMPENSATING")
      expect(compensating.map((entry) => [entry.toolName, JSON.parse(entry.payload!)])).toEqual([
        ["plain", { idempotencyKey: expect.stringMatching(/^caps\/plain:.*\/undo$/) }],
        [
          "granted",
          {
            idempotencyKey: expect.stringMatching(/^caps\/granted:.*\/undo$/),
            capabilities: ["network", "env:REFUND_URL"]
          }
        ]
      ])
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("an operator's compensation does not undo a step whose outcome is unknown and lists it as UNKNOWN", () =>
    Effect.gen(function* () {
      const { step, undone } = fixture()
      const program = Effect.gen(function* () {
        yield* step({ name: "a" })
        yield* step({ name: "b" })
        yield* step({ name: "c" })
      })
      const result = yield* Saga.run(
        "s1",
        program.pipe(Effect.provide(Testing.faults({ tool: "step", at: 3, fault: "unknown" })))
      )
      expect(result).toMatchObject({ _tag: "NeedsAttention", unknown: [{ stepId: idOf("step", "c") }] })
      expect(undone).toEqual([])

      const report = yield* Saga.compensate("s1")
      expect(undone).toEqual(["b", "a"])
      expect(report.undone.map((s) => s.stepId)).toEqual([idOf("step", "b"), idOf("step", "a")])
      expect(report.notUndone).toEqual([{ stepId: idOf("step", "c"), toolName: "step", phase: "UNKNOWN" }])
      expect(report.status).toBe("compensation_failed")
      expect(yield* phasesOf("s1", idOf("step", "c"))).toEqual(["INTENT"])
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("an undo that fails is journaled COMPENSATION_FAILED and does not stop the next undo", () =>
    Effect.gen(function* () {
      const { step, failing, undone } = fixture()
      const result = yield* Saga.run(
        "s1",
        Effect.gen(function* () {
          yield* step({ name: "a" })
          yield* step({ name: "b", undo: "fail" })
          yield* step({ name: "c" })
          yield* failing({ name: "d" })
        })
      )
      expect(result._tag).toBe("CompensationFailed")
      if (result._tag !== "CompensationFailed") return
      expect(undone).toEqual(["c", "b", "a"])
      expect(result.report.status).toBe("compensation_failed")
      expect(result.report.undone.map((s) => s.outcome)).toEqual(["completed", "failed", "completed"])
      expect(yield* phasesOf("s1", idOf("step", "b", "fail"))).toEqual([
        "INTENT",
        "EXECUTED",
        "COMPENSATING",
        "COMPENSATION_FAILED"
      ])
      expect((yield* Saga.status("s1")).status).toBe("compensation_failed")
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect(
    "a failed undo's detail names a typed error's tag, a plain object's fields, and is cut at 1000 characters",
    () =>
      Effect.gen(function* () {
        class Declined extends Schema.TaggedError<Declined>()("Declined", { why: Schema.String }) {}
        const failures: ReadonlyArray<readonly [string, unknown, string]> = [
          ["typed", new Declined({ why: "card expired" }), 'Declined: { "why": "card expired" }'],
          ["plain", { code: 42 }, '{"code":42}'],
          ["tagged", { _tag: "Declined", why: "card expired" }, 'Declined: {"why":"card expired"}'],
          ["outcome", Outcome.failed("the provider said no"), "failed (not applied): the provider said no"],
          ["huge", new Error("x".repeat(5000)), `${"x".repeat(999)}…`]
        ]
        for (const [sagaId, error, detail] of failures) {
          const book = Compensable.make({
            name: "book",
            input: Schema.String,
            success: Schema.String,
            execute: (room) => Effect.succeed(room),
            compensate: () => Effect.fail(error)
          })
          const result = yield* Saga.run(sagaId, Effect.zipRight(book("room-1"), Effect.fail("stop")))
          expect(result._tag === "CompensationFailed" && result.report.undone).toEqual([
            { stepId: expect.any(String), toolName: "book", outcome: "failed", detail }
          ])
        }
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("an undo's huge partial or unknown answer is journaled and reported cut at 1000 characters", () =>
    Effect.gen(function* () {
      const huge = "R".repeat(2 * 1024 * 1024)
      const answers = [
        ["partial", Outcome.partial(huge), "COMPENSATION_PARTIAL", "remaining"],
        ["unknown", Outcome.unknown(huge), "COMPENSATION_UNKNOWN", "reason"]
      ] as const
      for (const [sagaId, answer, phase, field] of answers) {
        const book = Compensable.make({
          name: "book",
          input: Schema.String,
          success: Schema.String,
          execute: (room) => Effect.succeed(room),
          compensate: () => Effect.fail(answer)
        })
        const result = yield* Saga.run(sagaId, Effect.zipRight(book("room-1"), Effect.fail("stop")))
        const detail = `${"R".repeat(999)}…`
        expect(result._tag === "CompensationFailed" && result.report.undone).toEqual([
          { stepId: expect.any(String), toolName: "book", outcome: sagaId, detail }
        ])
        const entry = (yield* entriesOf(sagaId)).find((candidate) => candidate.phase === phase)!
        expect(JSON.parse(entry.payload!)[field]).toBe(detail)
      }
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect(
    "an undo whose own code throws before it makes its Effect is COMPENSATION_FAILED, and the next undo runs",
    () =>
      Effect.gen(function* () {
        const { failing, step, undone } = fixture()
        const throwing = Compensable.make({
          name: "throwing",
          input: Schema.String,
          success: Schema.String,
          execute: () => Effect.succeed("not json"),
          compensate: (ctx) => {
            JSON.parse(ctx.result)
            return Effect.void
          }
        })
        const result = yield* Saga.run(
          "throws",
          Effect.gen(function* () {
            yield* step({ name: "a" })
            yield* throwing("b")
            yield* failing({ name: "c" })
          })
        )
        expect(result._tag).toBe("CompensationFailed")
        if (result._tag !== "CompensationFailed") return
        expect(undone).toEqual(["a"])
        expect(result.report.undone.map((s) => [s.toolName, s.outcome])).toEqual([
          ["throwing", "failed"],
          ["step", "completed"]
        ])
        expect(result.report.undone[0]!.detail).toContain("SyntaxError")
        expect((yield* Saga.status("throws")).status).toBe("compensation_failed")
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("partial and unknown undos are journaled as such and leave the saga CompensationFailed", () =>
    Effect.gen(function* () {
      const { step, failing, undone } = fixture()
      const result = yield* Saga.run(
        "s1",
        Effect.gen(function* () {
          yield* step({ name: "a", undo: "partial" })
          yield* step({ name: "b", undo: "unknown" })
          yield* failing({ name: "c" })
        })
      )
      expect(result._tag).toBe("CompensationFailed")
      if (result._tag !== "CompensationFailed") return
      expect(undone).toEqual(["b", "a"])
      expect(result.report.undone).toEqual([
        {
          stepId: idOf("step", "b", "unknown"),
          toolName: "step",
          outcome: "unknown",
          detail: "the provider timed out"
        },
        { stepId: idOf("step", "a", "partial"), toolName: "step", outcome: "partial", detail: "1 of 2 seats" }
      ])
      expect((yield* phasesOf("s1", idOf("step", "a", "partial"))).at(-1)).toBe("COMPENSATION_PARTIAL")
      expect((yield* phasesOf("s1", idOf("step", "b", "unknown"))).at(-1)).toBe("COMPENSATION_UNKNOWN")
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("a tool failure the program catches and ignores still compensates the saga when it ends", () =>
    Effect.gen(function* () {
      const { step, failing, undone } = fixture()
      const result = yield* Saga.run(
        "s1",
        Effect.gen(function* () {
          yield* step({ name: "a" })
          yield* Effect.ignore(failing({ name: "b" }))
          yield* step({ name: "c" })
          return "done"
        })
      )
      expect(result._tag).toBe("Compensated")
      if (result._tag !== "Compensated") return
      expect(undone).toEqual(["c", "a"])
      const cause = Cause.failureOption(result.cause)
      expect(Option.isSome(cause) && cause.value).toBeInstanceOf(SagaError.StepFailed)
      expect(cause).toMatchObject({ value: { stepId: idOf("failing", "b"), toolName: "failing" } })
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("compensating twice undoes each step once and the second call writes nothing", () =>
    Effect.gen(function* () {
      const { step, undone } = fixture()
      yield* Saga.run("s1", Effect.all([step({ name: "a" }), step({ name: "b" })]))
      const first = yield* Saga.compensate("s1")
      const written = (yield* entriesOf("s1")).length
      const second = yield* Saga.compensate("s1")
      expect(undone).toEqual(["b", "a"])
      expect(second).toEqual(first)
      expect((yield* entriesOf("s1")).length).toBe(written)
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("two concurrent compensations undo each step exactly once", () =>
    Effect.gen(function* () {
      const { step, undone } = fixture()
      yield* Saga.run("s1", Effect.all([step({ name: "a" }), step({ name: "b" }), step({ name: "c" })]))
      const [first, second] = yield* Effect.all([Saga.compensate("s1"), Saga.compensate("s1")], {
        concurrency: "unbounded"
      })
      expect(undone).toEqual(["c", "b", "a"])
      expect(second).toEqual(first)
      const compensating = (yield* entriesOf("s1")).filter((e) => e.phase === "COMPENSATING")
      expect(compensating).toHaveLength(3)
      expect(Journal.verifyEntries(yield* entriesOf("s1"))._tag).toBe("Intact")
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("an undo that started but never journaled its outcome is reported unknown and not run again", () =>
    Effect.gen(function* () {
      const { step, undone } = fixture()
      yield* Saga.run("s1", step({ name: "a" }))
      const journal = yield* Journal.Journal
      const position = Option.getOrThrow(yield* journal.get("s1"))
      const crashed = {
        stepId: idOf("step", "a"),
        toolName: "step",
        phase: "COMPENSATING" as const,
        input: null,
        payload: null
      }
      yield* journal.append("s1", position, [crashed])

      const report = yield* Saga.compensate("s1")
      expect(undone).toEqual([])
      expect(report.undone).toMatchObject([{ stepId: idOf("step", "a"), outcome: "unknown" }])
      expect(report.status).toBe("compensation_failed")
      expect((yield* phasesOf("s1", idOf("step", "a"))).at(-1)).toBe("COMPENSATION_UNKNOWN")
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("a tool without an undo is journaled SKIPPED and reported skipped", () =>
    Effect.gen(function* () {
      const { step, failing, undone } = fixture()
      const result = yield* Saga.run(
        "s1",
        Effect.gen(function* () {
          yield* step({ name: "a" })
          yield* notify({ to: "ops" })
          yield* failing({ name: "b" })
        })
      )
      expect(result._tag).toBe("Compensated")
      if (result._tag !== "Compensated") return
      expect(undone).toEqual(["a"])
      expect(result.report.undone[0]).toMatchObject({
        toolName: "notify",
        outcome: "skipped",
        detail: "no undo declared"
      })
      expect((yield* entriesOf("s1")).filter((e) => e.toolName === "notify").map((e) => e.phase)).toEqual([
        "INTENT",
        "EXECUTED",
        "SKIPPED"
      ])
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("an irreversible executed step is SKIPPED with the reason that no undo exists", () =>
    Effect.gen(function* () {
      const { failing } = fixture()
      const result = yield* Saga.run(
        "s1",
        Effect.gen(function* () {
          yield* wire({ amount: 100 })
          yield* failing({ name: "b" })
        })
      )
      expect(result._tag).toBe("Compensated")
      if (result._tag !== "Compensated") return
      expect(result.report.undone).toEqual([
        {
          stepId: expect.stringMatching(/^wire:/),
          toolName: "wire",
          outcome: "skipped",
          detail: "irreversible: no undo exists"
        }
      ])
      const phases = (yield* entriesOf("s1")).filter((e) => e.toolName === "wire").map((e) => e.phase)
      expect(phases).toEqual(["AWAITING_APPROVAL", "APPROVED", "INTENT", "EXECUTED", "SKIPPED"])
    }).pipe(Effect.provide(Testing.layerWith(Approval.layerAutoApprove)))
  )

  it.effect("an operator's compensation skips an irreversible step in a process that never registered its tool", () =>
    Effect.gen(function* () {
      const { step, undone } = fixture()
      yield* Saga.run(
        "s2",
        Effect.gen(function* () {
          yield* step({ name: "a" })
          yield* wire({ amount: 100 })
        })
      )
      // Another Saga service over the same journal, which holds the reversible tool only.
      const { report, status } = yield* Effect.gen(function* () {
        yield* Effect.flatMap(Saga.Saga, (saga) => saga.register([step]))
        return { report: yield* Saga.compensate("s2"), status: yield* Saga.status("s2") }
      }).pipe(Effect.provide(Saga.layer))
      expect(report.undone).toEqual([
        {
          stepId: expect.stringMatching(/^wire:/),
          toolName: "wire",
          outcome: "skipped",
          detail: "irreversible: no undo exists"
        },
        { stepId: idOf("step", "a"), toolName: "step", outcome: "completed" }
      ])
      expect(undone).toEqual(["a"])
      expect(status.status).toBe("compensated")
      expect(status.steps.map((each) => [each.toolName, each.irreversible])).toEqual([
        ["step", undefined],
        ["wire", true]
      ])
    }).pipe(Effect.provide(Testing.layerWith(Approval.layerAutoApprove)))
  )
  it.effect(
    "a request journaled after a step's INTENT does not make it irreversible: its undo is owed, not skipped",
    () =>
      Effect.gen(function* () {
        const { step } = fixture()
        yield* Saga.run("s3", step({ name: "a" }))
        // An AWAITING_APPROVAL appended past the library, after the step ran: the chain still verifies.
        const journal = yield* Journal.Journal
        const record = Option.getOrThrow(yield* journal.get("s3"))
        const stepId = idOf("step", "a")
        yield* journal.append("s3", { revision: record.revision, digest: record.digest }, [
          {
            stepId,
            toolName: "step",
            phase: "AWAITING_APPROVAL",
            input: JSON.stringify({ name: "a" }),
            payload: JSON.stringify({ inputDigest: "0".repeat(64) })
          }
        ])
        const { report, status } = yield* Effect.gen(function* () {
          return { status: yield* Saga.status("s3"), report: yield* Saga.compensate("s3") }
        }).pipe(Effect.provide(Saga.layer))
        expect(status.steps[0]?.irreversible).toBeUndefined()
        expect(report.undone).toEqual([
          { stepId, toolName: "step", outcome: "unavailable", detail: "tool step is not registered in this process" }
        ])
      }).pipe(Effect.provide(Testing.layer))
  )
})

const Input = Schema.Struct({
  name: Schema.String,
  undo: Schema.optional(Schema.Literal("fail", "partial", "unknown"))
})

/** Tools whose undos record the step's name; `undo` picks how the undo ends. */
const fixture = () => {
  const undone: Array<string> = []
  const step = Compensable.make({
    name: "step",
    input: Input,
    success: Schema.String,
    execute: ({ name }) => Effect.succeed(`handle-${name}`),
    compensate: ({ input }) =>
      Effect.suspend(() => {
        undone.push(input.name)
        switch (input.undo) {
          case "fail":
            return Effect.fail(new Error("refund endpoint said 500"))
          case "partial":
            return Effect.fail(Outcome.partial("1 of 2 seats"))
          case "unknown":
            return Effect.fail(Outcome.unknown("the provider timed out"))
          default:
            return Effect.void
        }
      })
  })
  const failing = Compensable.make({
    name: "failing",
    input: Input,
    success: Schema.String,
    execute: () => Effect.fail(Outcome.failed("out of stock")),
    compensate: ({ input }) => Effect.sync(() => undone.push(input.name))
  })
  return { step, failing, undone }
}

describe("Testing.faults", () => {
  it.effect("a plan that can never strike as written makes building the layer die, saying which plan and why", () =>
    Effect.gen(function* () {
      // As a JavaScript caller may write them: values the types would refuse.
      for (const [plan, why] of [
        [
          { tool: "step", at: 0, fault: "fail" },
          '{"tool":"step","at":0,"fault":"fail"}): at must be a whole number of at least 1, not 0'
        ],
        [{ tool: "step", at: "1", fault: "fail" }, 'at must be a whole number of at least 1, not "1"'],
        [
          { tool: "step", at: Number.NaN, fault: "fail" },
          '{"tool":"step","at":NaN,"fault":"fail"}): at must be a whole number of at least 1, not NaN'
        ],
        [{ tool: "step", on: "undo", fault: "fail" }, 'on must be "execute" or "compensate", not "undo"'],
        [{ tool: "step", fault: "bogus" }, 'fault must be "fail", "unknown" or "interrupt", not "bogus"'],
        [{ tool: "step", site: "compensate", fault: "fail" }, '"site" is none of tool, on, at, fault'],
        [{ fault: "fail" }, "tool must be a tool's name, not undefined"]
      ] as const) {
        const built = yield* Effect.exit(
          Effect.provide(
            Effect.void,
            Testing.faults({ tool: "step", fault: "fail" }, plan as unknown as Testing.FaultPlan)
          )
        )
        expect(built._tag).toBe("Failure")
        if (built._tag === "Failure") {
          const message = Cause.pretty(built.cause)
          expect(message).toContain("Testing.faults cannot use fault plan 2 (")
          expect(message).toContain(why)
        }
      }
      // A plan as written strikes.
      const { step } = fixture()
      const result = yield* Saga.run(
        "s1",
        step({ name: "a" }).pipe(Effect.provide(Testing.faults({ tool: "step", at: 1, fault: "unknown" })))
      )
      expect(result._tag).toBe("NeedsAttention")
    }).pipe(Effect.provide(Testing.layer))
  )
})

const notify = Compensable.make({
  name: "notify",
  input: Schema.Struct({ to: Schema.String }),
  success: Schema.String,
  execute: ({ to }) => Effect.succeed(`sent to ${to}`)
})

const wire = Compensable.make({
  name: "wire",
  input: Schema.Struct({ amount: Schema.Number }),
  success: Schema.String,
  reversibility: "irreversible",
  execute: ({ amount }) => Effect.succeed(`wire-${amount}`)
})

/** The step id the runtime derives: tool name, digest of the encoded input, occurrence. */
const idOf = (tool: string, name: string, undo?: string) => {
  const json = JSON.stringify(undo === undefined ? { name } : { name, undo })
  return `${tool}:${sha256(json).slice(0, 16)}#1`
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex")
