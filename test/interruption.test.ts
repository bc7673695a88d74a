import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Schema from "effect/Schema"
import { Approval, Compensable, Journal, Saga, Timeline } from "../src/index.js"
import * as Testing from "../src/Testing.js"
import { entriesOf } from "./fixtures/journal-reads.js"

describe("interruption", () => {
  it.effect("an interrupted saga is left Suspended and nothing is undone", () =>
    Effect.gen(function* () {
      const { book, blocking, started, undone } = yield* fixture
      const fiber = yield* Effect.fork(Saga.run("s1", Effect.zipRight(book({ seat: "1A" }), blocking({ seat: "1B" }))))
      yield* Deferred.await(started)
      yield* Fiber.interrupt(fiber)

      const status = yield* Saga.status("s1")
      expect(status.status).toBe("suspended")
      expect(status.steps.map((s) => [s.toolName, s.state, s.undo])).toEqual([
        ["book", "executed", undefined],
        ["blocking", "unknown", undefined]
      ])
      expect(undone).toEqual([])
      expect((yield* phases("s1")).at(-1)).toBe("SAGA_SUSPENDED")
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect('onInterrupt: "compensate" undoes the executed steps of an interrupted saga', () =>
    Effect.gen(function* () {
      const { book, started, undone } = yield* fixture
      const program = Effect.zipRight(
        book({ seat: "1A" }),
        Effect.zipRight(Deferred.succeed(started, undefined), Effect.never)
      )
      const fiber = yield* Effect.fork(Saga.run("s1", program, { onInterrupt: "compensate" }))
      yield* Deferred.await(started)
      yield* Fiber.interrupt(fiber)

      expect(undone).toEqual(["1A"])
      expect((yield* Saga.status("s1")).status).toBe("compensated")
      expect(yield* phases("s1")).toContain("COMPENSATED")
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect('onInterrupt: "compensate" undoes nothing while the interrupted call\'s outcome is unknown', () =>
    Effect.gen(function* () {
      const { blocking, book, started, undone } = yield* fixture
      const program = Effect.zipRight(book({ seat: "1A" }), blocking({ seat: "1B" }))
      const fiber = yield* Effect.fork(Saga.run("s1", program, { onInterrupt: "compensate" }))
      yield* Deferred.await(started)
      yield* Fiber.interrupt(fiber)

      expect(undone).toEqual([])
      const status = yield* Saga.status("s1")
      expect(status.status).toBe("needs_attention")
      expect(status.steps.map((s) => [s.toolName, s.state])).toEqual([
        ["book", "executed"],
        ["blocking", "unknown"]
      ])
      const written = yield* phases("s1")
      expect(written).not.toContain("SAGA_COMPENSATING")
      expect(written.at(-1)).toBe("SAGA_NEEDS_ATTENTION")
      // It says the interruption cut the call, not that a worker died: the run knows.
      expect(Object.fromEntries(Timeline.unknownReasons(yield* entriesOf("s1")))).toEqual({
        [status.steps[1]!.stepId]:
          "the run was interrupted (a shutdown, or its caller) while the call ran, after its INTENT was journaled: it may or may not have run"
      })
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("an injected interrupt suspends the saga and leaves the step's INTENT without an outcome", () =>
    Effect.gen(function* () {
      const { book } = yield* fixture
      const program = Effect.zipRight(book({ seat: "1A" }), book({ seat: "1B" }))
      const result = yield* Saga.run(
        "s1",
        program.pipe(Effect.provide(Testing.faults({ tool: "book", at: 2, fault: "interrupt" })))
      )
      expect(result._tag).toBe("Suspended")
      const entries = yield* Effect.flatMap(Journal.Journal, (journal) => journal.read("s1"))
      const intent = entries.find((e) => e.phase === "INTENT" && e.input === JSON.stringify({ seat: "1B" }))!
      expect(entries.filter((e) => e.stepId === intent.stepId).map((e) => e.phase)).toEqual(["INTENT"])
      expect(entries.at(-1)?.phase).toBe("SAGA_SUSPENDED")
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("resuming a saga whose interrupted step has no outcome needs attention for that step", () =>
    Effect.gen(function* () {
      const { book, booked } = yield* fixture
      const program = Effect.zipRight(book({ seat: "1A" }), book({ seat: "1B" }))
      yield* Saga.run("s1", program.pipe(Effect.provide(Testing.faults({ tool: "book", at: 2, fault: "interrupt" }))))

      const result = yield* Saga.run("s1", program)
      expect(result).toMatchObject({ _tag: "NeedsAttention", unknown: [{ toolName: "book" }] })
      expect(booked).toEqual(["1A"])
      expect((yield* Saga.status("s1")).status).toBe("needs_attention")
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect('resuming with retryMode "idempotency-key" re-executes the step with the same key and completes', () =>
    Effect.gen(function* () {
      const { keyed, keys } = yield* fixture
      const program = Effect.all([keyed({ seat: "1A" }), keyed({ seat: "1B" })])
      const first = yield* Saga.run(
        "s1",
        program.pipe(Effect.provide(Testing.faults({ tool: "keyed", at: 2, fault: "interrupt" })))
      )
      expect(first._tag).toBe("Suspended")

      const result = yield* Saga.run("s1", program)
      expect(result).toMatchObject({ _tag: "Completed", value: ["1A", "1B"] })
      expect(keys.map(([seat]) => seat)).toEqual(["1A", "1B"])
      const intents = (yield* Effect.flatMap(Journal.Journal, (journal) => journal.read("s1"))).filter(
        (e) => e.phase === "INTENT" && e.input === JSON.stringify({ seat: "1B" })
      )
      expect(intents.map((e) => JSON.parse(e.payload!))).toEqual([
        { idempotencyKey: keys[1]![1], attempt: 1, undo: true, retriesByKey: true },
        { idempotencyKey: keys[1]![1], attempt: 2, undo: true, retriesByKey: true }
      ])
    }).pipe(Effect.provide(Testing.layer))
  )
})

describe("interrupting a run that has written nothing", () => {
  it.effect(
    "the replay of a saga awaiting approval writes nothing: it stays awaiting approval, its request pending",
    () =>
      Effect.gen(function* () {
        const { book } = yield* fixture
        const wire = Compensable.make({
          name: "wire",
          input: Seat,
          success: Schema.String,
          reversibility: "irreversible",
          execute: ({ seat }) => Effect.succeed(seat)
        })
        const program = (before: Effect.Effect<void>) =>
          Effect.zipRight(book({ seat: "1A" }), Effect.zipRight(before, wire({ seat: "9Z" })))
        expect((yield* Saga.run("ap", program(Effect.void)))._tag).toBe("AwaitingApproval")
        const journaled = yield* phases("ap")

        const replaying = yield* Deferred.make<void>()
        const fiber = yield* Effect.fork(
          Saga.run("ap", program(Effect.zipRight(Deferred.succeed(replaying, undefined), Effect.never)))
        )
        yield* Deferred.await(replaying)
        yield* Fiber.interrupt(fiber)

        expect(yield* phases("ap")).toEqual(journaled)
        expect((yield* Saga.status("ap")).status).toBe("awaiting_approval")
        expect((yield* Approval.pending).map((request) => request.toolName)).toEqual(["wire"])
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("the replay of a saga that needs attention writes nothing: it still needs attention", () =>
    Effect.gen(function* () {
      const { book, blocking, started } = yield* fixture
      const program = (before: Effect.Effect<void>) =>
        Effect.zipRight(book({ seat: "1A" }), Effect.zipRight(before, blocking({ seat: "1B" })))
      const first = yield* Effect.fork(Saga.run("na", program(Effect.void)))
      yield* Deferred.await(started)
      yield* Fiber.interrupt(first)
      expect((yield* Saga.run("na", program(Effect.void)))._tag).toBe("NeedsAttention")
      const journaled = yield* phases("na")

      const replaying = yield* Deferred.make<void>()
      const fiber = yield* Effect.fork(
        Saga.run("na", program(Effect.zipRight(Deferred.succeed(replaying, undefined), Effect.never)))
      )
      yield* Deferred.await(replaying)
      yield* Fiber.interrupt(fiber)

      expect(yield* phases("na")).toEqual(journaled)
      expect((yield* Saga.status("na")).status).toBe("needs_attention")
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("a new saga interrupted before its first step is journaled suspended, so that it can be resumed", () =>
    Effect.gen(function* () {
      const { book } = yield* fixture
      const replaying = yield* Deferred.make<void>()
      const program = Effect.zipRight(
        Effect.zipRight(Deferred.succeed(replaying, undefined), Effect.never),
        book({ seat: "1A" })
      )
      const fiber = yield* Effect.fork(Saga.run("new", program))
      yield* Deferred.await(replaying)
      yield* Fiber.interrupt(fiber)

      expect(yield* phases("new")).toEqual(["SAGA_STARTED", "SAGA_SUSPENDED"])
    }).pipe(Effect.provide(Testing.layer))
  )
})

/** Tools that log what they booked and undid; `blocking` signals `started` and never returns. */
const Seat = Schema.Struct({ seat: Schema.String })

const fixture = Effect.gen(function* () {
  const started = yield* Deferred.make<void>()
  const booked: Array<string> = []
  const undone: Array<string> = []
  const keys: Array<readonly [string, string]> = []
  const undo = ({ input }: Compensable.CompensationContext<{ readonly seat: string }>) =>
    Effect.sync(() => undone.push(input.seat))
  const book = Compensable.make({
    name: "book",
    input: Seat,
    success: Schema.String,
    execute: ({ seat }) => Effect.sync(() => booked.push(seat)).pipe(Effect.as(seat)),
    compensate: undo
  })
  const blocking = Compensable.make({
    name: "blocking",
    input: Seat,
    success: Schema.String,
    execute: () => Effect.zipRight(Deferred.succeed(started, undefined), Effect.never),
    compensate: undo
  })
  const keyed = Compensable.make({
    name: "keyed",
    input: Seat,
    success: Schema.String,
    retryMode: "idempotency-key",
    execute: ({ seat }, step) => Effect.sync(() => keys.push([seat, step.idempotencyKey])).pipe(Effect.as(seat)),
    compensate: undo
  })
  return { book, blocking, keyed, started, booked, undone, keys }
})

const phases = (sagaId: string) =>
  Effect.map(
    Effect.flatMap(Journal.Journal, (journal) => journal.read(sagaId)),
    (entries) => entries.map((e) => e.phase)
  )
