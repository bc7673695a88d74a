/**
 * A step's `EXECUTED` is held back and travels with the saga's next append (journal/writer.ts,
 * docs/storage.md "EXECUTED with the saga's next entry"): one append a step. Whatever a run ends
 * with, nothing held back is lost while the process lives: it is written before the run decides
 * anything from its view (a halt, a failure, an interruption, a fatal error), or with
 * `SAGA_COMPLETED`. Observed on the in-memory journal, whose appends done at once are recorded.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import { Effect, Either, Fiber, Layer, Schema, TestClock } from "effect"
import { Approval, Compensable, Journal, Outcome, Saga, SagaError } from "../src/index.js"
import * as HeldBack from "../src/internal/journal/heldBack.js"
import { makeMemoryJournal } from "../src/internal/journal/memory.js"
import { appendsAtOnce } from "../src/internal/journal/synchronous.js"
import * as Testing from "../src/Testing.js"

describe("a step's EXECUTED travels with the saga's next append", () => {
  it.effect("a saga of three steps: one append a step, the last EXECUTED with SAGA_COMPLETED", () =>
    Effect.gen(function* () {
      const { appends, layer } = recorded()
      const { calls, tools } = toolsOf()
      const result = yield* Saga.run("three", threeSteps(tools)).pipe(Effect.provide(layer))
      expect(result._tag).toBe("Completed")
      expect(appends).toEqual(["SAGA_STARTED+INTENT", "EXECUTED+INTENT", "EXECUTED+INTENT", "EXECUTED+SAGA_COMPLETED"])
      expect(calls).toEqual(["reserve", "charge", "ship"])
    })
  )

  it.effect(
    "a program that waits before its next step: the EXECUTED is journaled while it waits, at the time it waits",
    () =>
      Effect.gen(function* () {
        const { appends, layer } = recorded()
        const { tools } = toolsOf()
        const program = Effect.gen(function* () {
          yield* tools[0]!({ n: 1 })
          yield* Effect.sleep("1 hour")
          yield* tools[1]!({ n: 1 })
        })
        yield* Effect.gen(function* () {
          const journal = yield* Journal.Journal
          const run = yield* Effect.fork(Saga.run("waiting", program))
          let entries = yield* journal.read("waiting")
          for (let tries = 0; tries < 100 && !entries.some((entry) => entry.phase === "EXECUTED"); tries++) {
            yield* Effect.yieldNow()
            entries = yield* journal.read("waiting")
          }
          expect(entries.map((entry) => entry.phase)).toEqual(["SAGA_STARTED", "INTENT", "EXECUTED"])
          expect(entries[2]!.at).toBe(new Date(0).toISOString())
          yield* TestClock.adjust("1 hour")
          expect((yield* Fiber.join(run))._tag).toBe("Completed")
        }).pipe(Effect.provide(layer))
        // Written alone, by the writer's own fiber (not an append done at once), then the rest as usual.
        expect(appends).toEqual(["SAGA_STARTED+INTENT", "INTENT", "EXECUTED+SAGA_COMPLETED"])
      })
  )

  it.effect("a step that fails after one that ran: its FAILED carries that EXECUTED, and the step is undone", () =>
    Effect.gen(function* () {
      const { appends, layer } = recorded()
      const { calls, tools } = toolsOf({ charge: () => Outcome.failed("card declined") })
      const result = yield* Saga.run("declined", threeSteps(tools)).pipe(Effect.provide(layer))
      expect(result._tag).toBe("Compensated")
      expect(appends.slice(0, 2)).toEqual(["SAGA_STARTED+INTENT", "EXECUTED+INTENT"])
      expect(appends[2]).toBe("FAILED")
      expect(calls).toEqual(["reserve", "charge", "undo reserve"])
    })
  )

  it.effect(
    "a halt after a step that ran (an unknown outcome): that step is journaled executed, only the other is unknown",
    () =>
      Effect.gen(function* () {
        const { layer } = recorded()
        const { tools } = toolsOf({ charge: () => Outcome.unknown("the card network timed out") })
        const { result, status } = yield* Effect.all({
          result: Saga.run("unknown", threeSteps(tools)),
          status: Saga.status("unknown")
        }).pipe(Effect.provide(layer))
        assert(result._tag === "NeedsAttention")
        expect(result.unknown.map((step) => step.toolName)).toEqual(["charge"])
        expect(status.steps.map((step) => [step.toolName, step.state])).toEqual([
          ["reserve", "executed"],
          ["charge", "unknown"]
        ])
      })
  )

  it.effect("a program interrupted right after a step: the step is journaled before SAGA_SUSPENDED and replays", () =>
    Effect.gen(function* () {
      const { layer } = recorded()
      const { calls, tools } = toolsOf()
      const program = Effect.zipRight(tools[0]!({ n: 1 }), Effect.interrupt)
      yield* Effect.gen(function* () {
        expect((yield* Saga.run("interrupted", program))._tag).toBe("Suspended")
        const entries = yield* Effect.flatMap(Journal.Journal, (journal) => journal.read("interrupted"))
        expect(entries.map((entry) => entry.phase)).toEqual(["SAGA_STARTED", "INTENT", "EXECUTED", "SAGA_SUSPENDED"])
        expect((yield* Saga.run("interrupted", threeSteps(tools)))._tag).toBe("Completed")
      }).pipe(Effect.provide(layer))
      // The reservation replayed from the journal: it ran once.
      expect(calls).toEqual(["reserve", "charge", "ship"])
    })
  )

  it.effect(
    "a fatal error after a step that ran (the store refuses the next append): the step is still journaled",
    () =>
      Effect.gen(function* () {
        const { calls, tools } = toolsOf()
        const { layer, stored } = refusingSecondAppend()
        const exit = yield* Effect.exit(Saga.run("refused", threeSteps(tools)).pipe(Effect.provide(layer)))
        expect(exit._tag).toBe("Failure")
        expect(calls).toEqual(["reserve"])
        const entries = yield* stored.read("refused")
        expect(entries.map((entry) => entry.phase)).toEqual(["SAGA_STARTED", "INTENT", "EXECUTED"])
      })
  )

  it.effect("steps run at once: every EXECUTED is journaled, and a replay runs nothing again", () =>
    Effect.gen(function* () {
      const { calls, tools } = toolsOf()
      const program = Effect.all(
        tools.map((tool, n) => tool({ n })),
        { concurrency: "unbounded" }
      )
      yield* Effect.gen(function* () {
        expect((yield* Saga.run("parallel", program))._tag).toBe("Completed")
        const status = yield* Saga.status("parallel")
        expect(status.steps.map((step) => step.state)).toEqual(["executed", "executed", "executed"])
        expect((yield* Saga.run("parallel", program))._tag).toBe("Completed")
      }).pipe(Effect.provide(Testing.layer))
      expect(calls.sort()).toEqual(["charge", "reserve", "ship"])
    })
  )

  it.effect("a call settled twice in one run: the second answers the first's result, without running again", () =>
    Effect.gen(function* () {
      const calls: Array<string> = []
      const wire = Compensable.make({
        name: "wire",
        input: Schema.Struct({ amount: Schema.Number }),
        success: Schema.String,
        reversibility: "irreversible",
        execute: () =>
          Effect.sync(() => {
            calls.push("wire")
            return "wired"
          })
      })
      const program = Effect.gen(function* () {
        const saga = yield* Saga.CurrentSaga
        const pending = yield* Effect.flip(saga.step(wire.spec, { amount: 5 }, "wire", { deferApproval: true }))
        assert(pending instanceof SagaError.ApprovalPending)
        const first = (yield* saga.settle(pending.stepId)) as string
        const second = (yield* saga.settle(pending.stepId)) as string
        return [first, second]
      })
      yield* Effect.gen(function* () {
        const waiting = yield* Saga.run("twice", program)
        assert(waiting._tag === "AwaitingApproval")
        yield* Saga.approve("twice", waiting.request.stepId, { by: "alice" })
        const done = yield* Saga.run("twice", program)
        assert(done._tag === "Completed")
        expect(done.value).toEqual(["wired", "wired"])
      }).pipe(Effect.provide(Testing.layer))
      expect(calls).toEqual(["wire"])
    })
  )

  it.effect("a journal of the user's own (its append replaced): every EXECUTED is an append of its own", () =>
    Effect.gen(function* () {
      const appends: Array<string> = []
      const own = Layer.effect(
        Journal.Journal,
        Effect.map(Journal.Journal, (journal) =>
          Journal.Journal.of({
            ...journal,
            append: (sagaId, expected, drafts, holder) => {
              appends.push(drafts.map((draft) => draft.phase).join("+"))
              return journal.append(sagaId, expected, drafts, holder)
            }
          })
        )
      ).pipe(Layer.provide(Journal.layerMemory))
      const { tools } = toolsOf()
      const layer = Saga.layer.pipe(Layer.provideMerge(Layer.merge(own, Approval.layerMemory)))
      expect((yield* Saga.run("own", threeSteps(tools)).pipe(Effect.provide(layer)))._tag).toBe("Completed")
      expect(appends).toEqual([
        "SAGA_STARTED+INTENT",
        "EXECUTED",
        "INTENT",
        "EXECUTED",
        "INTENT",
        "EXECUTED",
        "SAGA_COMPLETED"
      ])
    })
  )
})

/** Three tools, reserve, charge and ship, each recording its call (and its undo) in `calls`; `fail` replaces a tool's answer. */
const toolsOf = (fail: Partial<Record<string, () => Effect.Effect<never, unknown>>> = {}) => {
  const calls: Array<string> = []
  const tools = ["reserve", "charge", "ship"].map((name) =>
    Compensable.make({
      name,
      input: Schema.Struct({ n: Schema.Number }),
      success: Schema.String,
      execute: () =>
        Effect.suspend(() => {
          calls.push(name)
          return fail[name]?.() ?? Effect.succeed(`${name}-done`)
        }),
      compensate: () => Effect.sync(() => calls.push(`undo ${name}`))
    })
  )
  return { calls, tools }
}

const threeSteps = (tools: ReturnType<typeof toolsOf>["tools"]) =>
  Effect.gen(function* () {
    for (const tool of tools) yield* tool({ n: 1 })
  })

/** `Testing.layer`, with every append the memory journal does at once recorded as its phases joined by `+`. */
const recorded = () => {
  const appends: Array<string> = []
  const journal = Layer.effect(
    Journal.Journal,
    Effect.map(Journal.Journal, (journal) => {
      const atOnce = appendsAtOnce.get(journal.append)!
      appendsAtOnce.set(journal.append, (sagaId, expected, drafts, holder, millis) => {
        const appended = atOnce(sagaId, expected, drafts, holder, millis)
        if (appended !== undefined && Either.isRight(appended)) appends.push(drafts.map((d) => d.phase).join("+"))
        return appended
      })
      return journal
    })
  ).pipe(Layer.provide(Journal.layerMemory))
  return { appends, layer: Saga.layer.pipe(Layer.provideMerge(Layer.merge(journal, Approval.layerMemory))) }
}

/**
 * A memory journal whose second append is refused, as a full disk would. It allows holding back as
 * the memory journal does (its `append` is registered as the store's own); `stored` reads what the
 * memory journal under it kept.
 */
const refusingSecondAppend = () => {
  const memory = makeMemoryJournal(undefined)
  let appends = 0
  const append: Journal.Journal["Type"]["append"] = (sagaId, expected, drafts, holder) =>
    ++appends === 2
      ? Effect.fail(new Journal.JournalError({ operation: "append", reason: "the disk is full" }))
      : memory.append(sagaId, expected, drafts, holder)
  HeldBack.allow(append)
  const journal = Layer.succeed(Journal.Journal, Journal.Journal.of({ ...memory, append }))
  return { stored: memory, layer: Saga.layer.pipe(Layer.provideMerge(Layer.merge(journal, Approval.layerMemory))) }
}
