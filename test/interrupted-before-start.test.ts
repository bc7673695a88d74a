/**
 * A run interrupted with none of a step's calls in flight (while its `INTENT` was written, or in its
 * retry wait after typed failures) journals the step as not started: it did not run, so a resume runs
 * it and `onInterrupt: "compensate"` compensates; a call that did start stays unknown.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer, Schedule, Schema, TestClock } from "effect"
import { Approval, Compensable, Journal, Outcome, Saga, SqlJournal, SqlStore, Timeline } from "../src/index.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-not-started-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

type Store = Layer.Layer<Approval.Approval | Journal.Journal, unknown>

const stores: ReadonlyArray<readonly [string, () => Store]> = [
  ["memory", () => Layer.merge(Journal.layerMemory, Approval.layerMemory)],
  [
    "SQLite",
    () =>
      SqlStore.layer.pipe(
        Layer.provideMerge(SqlJournal.layerSqliteClient({ filename: path.join(dir, `${crypto.randomUUID()}.db`) }))
      )
  ]
]

/** Where the first `INTENT` append of a tool waits: `reached` once it waits, on until `open` is done. */
interface Gate {
  readonly tool: string
  readonly reached: Deferred.Deferred<void>
  readonly open: Deferred.Deferred<void>
}

const gate = (tool: string) =>
  Effect.map(
    Effect.all([Deferred.make<void>(), Deferred.make<void>()]),
    ([reached, open]): Gate => ({
      tool,
      reached,
      open
    })
  )

/** The store, with the first `INTENT` append of `gate.tool` held at the gate (a slow round trip to a database). */
const gated = (store: Store, { open, reached, tool }: Gate) => {
  const held = Layer.effect(
    Journal.Journal,
    Effect.map(Journal.Journal, (journal) => {
      let struck = false
      return Journal.Journal.of({
        ...journal,
        append: (sagaId, expected, drafts, holder) => {
          if (struck || !drafts.some((draft) => draft.phase === "INTENT" && draft.toolName === tool)) {
            return journal.append(sagaId, expected, drafts, holder)
          }
          struck = true
          return Effect.zipRight(
            Effect.zipRight(Deferred.succeed(reached, undefined), Deferred.await(open)),
            journal.append(sagaId, expected, drafts, holder)
          )
        }
      })
    })
  )
  return Saga.layer.pipe(Layer.provideMerge(Layer.provideMerge(held, store)))
}

/** Tools that count their calls and undos. */
const toolsCounting = () => {
  const calls: Array<string> = []
  const undone: Array<string> = []
  const tool = (name: string) =>
    Compensable.make({
      name,
      input: Schema.Number,
      success: Schema.String,
      execute: (n) => Effect.sync(() => calls.push(name)).pipe(Effect.as(`${name}-${n}`)),
      compensate: () => Effect.sync(() => undone.push(name))
    })
  return { charge: tool("charge"), ship: tool("ship"), calls, undone }
}

const entriesOf = (sagaId: string) => Effect.flatMap(Journal.Journal, (journal) => journal.read(sagaId))

/**
 * Turns of the scheduler enough for an interruption to reach the fibers a run forked (the program's,
 * a concurrent branch's): each hop is a message the next fiber reads on its turn.
 */
const turns = Effect.repeatN(Effect.yieldNow(), 20)

/** Interrupts `fiber` while the gate holds an append (the interruption waits for it), then opens the gate. */
const interruptAtGate = <A, E>(fiber: Fiber.RuntimeFiber<A, E>, { open, reached }: Gate) =>
  Effect.gen(function* () {
    yield* Deferred.await(reached)
    const interrupting = yield* Effect.fork(Fiber.interrupt(fiber))
    yield* turns
    yield* Deferred.succeed(open, undefined)
    yield* Fiber.join(interrupting)
  })

describe("a step interrupted before its call started", () => {
  for (const [name, store] of stores) {
    it.scoped(
      `${name}: interrupted while its INTENT is written, it is not started; a resume runs it once and completes`,
      () =>
        Effect.gen(function* () {
          const { calls, charge, ship } = toolsCounting()
          const shipGate = yield* gate("ship")
          const program = Effect.zipRight(charge(1), ship(2))
          yield* Effect.gen(function* () {
            const fiber = yield* Effect.fork(Saga.run("o1", program))
            yield* interruptAtGate(fiber, shipGate)

            const entries = yield* entriesOf("o1")
            expect(
              entries.map((entry) => `${entry.phase}${entry.toolName === null ? "" : `(${entry.toolName})`}`)
            ).toEqual(["SAGA_STARTED", "INTENT(charge)", "EXECUTED(charge)", "INTENT(ship)", "SAGA_SUSPENDED"])
            const shipStep = entries[3]!.stepId!
            expect(JSON.parse(entries[4]!.payload!)).toEqual({ notStarted: [shipStep] })
            expect(Journal.verifyEntries(entries)._tag).toBe("Intact")
            expect(calls).toEqual(["charge"])
            const status = yield* Saga.status("o1")
            expect(status.status).toBe("suspended")
            expect(status.steps.map((step) => [step.toolName, step.state])).toEqual([
              ["charge", "executed"],
              ["ship", "not_started"]
            ])
            expect(Array.from(Timeline.notStartedSteps(entries))).toEqual([shipStep])
            expect(Timeline.format(entries)).toContain(`not started (did not run): ${shipStep}`)

            const resumed = yield* Saga.run("o1", program)
            expect(resumed).toMatchObject({ _tag: "Completed", value: "ship-2" })
            expect(calls).toEqual(["charge", "ship"])
            const after = yield* entriesOf("o1")
            const intents = after.filter((entry) => entry.phase === "INTENT" && entry.stepId === shipStep)
            expect(intents.map((entry) => JSON.parse(entry.payload!).attempt)).toEqual([1, 2])
            expect(Journal.verifyEntries(after)._tag).toBe("Intact")
          }).pipe(Effect.provide(gated(store(), shipGate)))
        })
    )
  }

  it.scoped("a program that interrupts its own step before it starts completes; its replay answers the same", () =>
    Effect.gen(function* () {
      const { calls, charge, ship } = toolsCounting()
      const shipGate = yield* gate("ship")
      const program = Effect.zipRight(Effect.ignore(Effect.timeout(ship(2), "1 second")), charge(1))
      yield* Effect.gen(function* () {
        const fiber = yield* Effect.fork(Saga.run("c1", program))
        yield* Deferred.await(shipGate.reached)
        yield* TestClock.adjust("1 second")
        yield* Deferred.succeed(shipGate.open, undefined)
        expect(yield* Fiber.join(fiber)).toMatchObject({ _tag: "Completed", value: "charge-1" })
        expect(calls).toEqual(["charge"])
        const entries = yield* entriesOf("c1")
        const shipStep = entries.find((entry) => entry.toolName === "ship")!.stepId!
        expect(entries.at(-1)).toMatchObject({ phase: "SAGA_COMPLETED" })
        expect(JSON.parse(entries.at(-1)!.payload!)).toEqual({ notStarted: [shipStep] })
        expect((yield* Saga.status("c1")).steps.map((step) => [step.toolName, step.state])).toEqual([
          ["ship", "not_started"],
          ["charge", "executed"]
        ])

        const replay = yield* Effect.fork(Saga.run("c1", program))
        yield* TestClock.adjust("1 second")
        expect(yield* Fiber.join(replay)).toMatchObject({ _tag: "Completed", value: "charge-1" })
        expect(calls).toEqual(["charge"])
        expect(yield* entriesOf("c1")).toEqual(entries)
      }).pipe(Effect.provide(gated(stores[0]![1](), shipGate)))
    })
  )

  it.scoped('onInterrupt: "compensate" compensates: the step that did not start is not unknown', () =>
    Effect.gen(function* () {
      const { calls, charge, ship, undone } = toolsCounting()
      const shipGate = yield* gate("ship")
      yield* Effect.gen(function* () {
        const fiber = yield* Effect.fork(
          Saga.run("o2", Effect.zipRight(charge(1), ship(2)), { onInterrupt: "compensate" })
        )
        yield* interruptAtGate(fiber, shipGate)

        expect(calls).toEqual(["charge"])
        expect(undone).toEqual(["charge"])
        const status = yield* Saga.status("o2")
        expect(status.status).toBe("compensated")
        expect(status.steps.map((step) => [step.toolName, step.state, step.undo])).toEqual([
          ["charge", "executed", "completed"],
          ["ship", "not_started", undefined]
        ])
        const entries = yield* entriesOf("o2")
        expect(entries.map((entry) => entry.phase)).not.toContain("SAGA_NEEDS_ATTENTION")
        const compensating = entries.find((entry) => entry.phase === "SAGA_COMPENSATING")!
        expect(JSON.parse(compensating.payload!).notStarted).toEqual([status.steps[1]!.stepId])
      }).pipe(Effect.provide(gated(stores[0]![1](), shipGate)))
    })
  )

  it.scoped("a call that answered while the run was being interrupted is journaled EXECUTED, not left unknown", () =>
    Effect.gen(function* () {
      // `first` answers while `second`'s INTENT holds the journal: its EXECUTED waits for the lock
      // while the run is interrupted.
      const answer = yield* Deferred.make<void>()
      const calls: Array<string> = []
      const first = Compensable.make({
        name: "first",
        input: Schema.Number,
        success: Schema.Number,
        execute: (n) =>
          Effect.zipRight(
            Deferred.await(answer),
            Effect.sync(() => calls.push("first"))
          ).pipe(Effect.as(n)),
        compensate: () => Effect.void
      })
      const second = Compensable.make({
        name: "second",
        input: Schema.Number,
        success: Schema.Number,
        execute: (n) => Effect.sync(() => calls.push("second")).pipe(Effect.as(n)),
        compensate: () => Effect.void
      })
      const secondGate = yield* gate("second")
      // A branch after the steps' that says when the interruption reached the program's branches.
      const reached = yield* Deferred.make<void>()
      const told = Effect.onInterrupt(Effect.never, () => Deferred.succeed(reached, undefined))
      const program = Effect.all([first(1), second(2), told], { concurrency: 3 })
      yield* Effect.gen(function* () {
        const fiber = yield* Effect.fork(Saga.run("o3", program))
        yield* Deferred.await(secondGate.reached)
        yield* Deferred.succeed(answer, undefined)
        // `first` answers and waits for the journal's lock, held by `second`'s INTENT.
        yield* turns
        expect(calls).toEqual(["first"])
        const interrupting = yield* Effect.fork(Fiber.interrupt(fiber))
        yield* Deferred.await(reached)
        yield* Deferred.succeed(secondGate.open, undefined)
        yield* Fiber.join(interrupting)

        const status = yield* Saga.status("o3")
        expect(status.status).toBe("suspended")
        expect(status.steps.map((step) => [step.toolName, step.state])).toEqual([
          ["first", "executed"],
          ["second", "not_started"]
        ])
        const resumed = yield* Saga.run("o3", Effect.all([first(1), second(2)], { concurrency: 2 }))
        expect(resumed).toMatchObject({ _tag: "Completed", value: [1, 2] })
        expect(calls).toEqual(["first", "second"])
      }).pipe(Effect.provide(gated(stores[0]![1](), secondGate)))
    })
  )

  it.effect('interrupted in its retry wait after typed failures, nothing is in flight: "compensate" compensates', () =>
    Effect.gen(function* () {
      const attempted = yield* Deferred.make<void>()
      const { charge, undone } = toolsCounting()
      const pay = Compensable.make({
        name: "pay",
        input: Schema.Number,
        success: Schema.String,
        retry: Schedule.spaced("1 minute"),
        execute: () =>
          Effect.zipRight(Deferred.succeed(attempted, undefined), Effect.fail(Outcome.failed("declined: not applied"))),
        compensate: () => Effect.void
      })
      const fiber = yield* Effect.fork(
        Saga.run("r1", Effect.zipRight(charge(1), pay(5)), { onInterrupt: "compensate" })
      )
      yield* Deferred.await(attempted)
      yield* Fiber.interrupt(fiber)

      expect(undone).toEqual(["charge"])
      const status = yield* Saga.status("r1")
      expect(status.status).toBe("compensated")
      expect(status.steps.map((step) => [step.toolName, step.state])).toEqual([
        ["charge", "executed"],
        ["pay", "not_started"]
      ])
    }).pipe(Effect.provide(Saga.layer.pipe(Layer.provideMerge(stores[0]![1]()))))
  )

  it.effect("interrupted in its retry wait after an attempt whose outcome is unknown, it stays unknown", () =>
    Effect.gen(function* () {
      const attempted = yield* Deferred.make<void>()
      const { charge, undone } = toolsCounting()
      const pay = Compensable.make({
        name: "pay",
        input: Schema.Number,
        success: Schema.String,
        retry: Schedule.spaced("1 minute"),
        retryMode: "idempotency-key",
        execute: () =>
          Effect.zipRight(
            Deferred.succeed(attempted, undefined),
            Effect.fail(Outcome.unknown("the provider timed out"))
          ),
        compensate: () => Effect.void
      })
      const fiber = yield* Effect.fork(
        Saga.run("r2", Effect.zipRight(charge(1), pay(5)), { onInterrupt: "compensate" })
      )
      yield* Deferred.await(attempted)
      yield* Fiber.interrupt(fiber)

      expect(undone).toEqual([])
      const status = yield* Saga.status("r2")
      expect(status.status).toBe("needs_attention")
      expect(status.steps.map((step) => [step.toolName, step.state])).toEqual([
        ["charge", "executed"],
        ["pay", "unknown"]
      ])
    }).pipe(Effect.provide(Saga.layer.pipe(Layer.provideMerge(stores[0]![1]()))))
  )

  it.effect("a call that started and was interrupted stays unknown: a resume needs attention", () =>
    Effect.gen(function* () {
      const started = yield* Deferred.make<void>()
      const { charge } = toolsCounting()
      const hanging = Compensable.make({
        name: "hanging",
        input: Schema.Number,
        success: Schema.String,
        execute: () => Effect.zipRight(Deferred.succeed(started, undefined), Effect.never),
        compensate: () => Effect.void
      })
      const program = Effect.zipRight(charge(1), hanging(2))
      const fiber = yield* Effect.fork(Saga.run("u1", program))
      yield* Deferred.await(started)
      yield* Fiber.interrupt(fiber)

      const entries = yield* entriesOf("u1")
      expect(entries.at(-1)).toMatchObject({ phase: "SAGA_SUSPENDED", payload: null })
      expect(yield* Saga.run("u1", program)).toMatchObject({
        _tag: "NeedsAttention",
        unknown: [{ toolName: "hanging" }]
      })
    }).pipe(Effect.provide(Saga.layer.pipe(Layer.provideMerge(stores[0]![1]()))))
  )
})
