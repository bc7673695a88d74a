/**
 * A read (`changesNothing`) whose `INTENT` has no outcome changed nothing, whether it ran or not: it
 * holds nothing up. Compensation passes over it, a resume runs it again, and no operator view lists
 * it as something to settle. On every store a process can open alone: memory and an SQLite file.
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer, Schema, TestClock } from "effect"
import { Compensable, Journal, Outcome, Saga, SagaDefinition, SqlStore } from "../src/index.js"
import * as Pages from "../src/internal/http/console/pages.js"
import { getSaga } from "../src/internal/http/reading.js"
import * as Testing from "../src/Testing.js"

const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "effect-saga-unknown-reads-"))

const stores: ReadonlyArray<readonly [string, () => Layer.Layer<Saga.Saga | Journal.Journal, unknown>]> = [
  ["Journal.layerMemory", () => Testing.layer],
  [
    "SqlStore.layerSqlite",
    () => Saga.layer.pipe(Layer.provideMerge(SqlStore.layerSqlite({ filename: Path.join(dir, `${Math.random()}.db`) })))
  ]
]

const SKIPPED_READ = "a read (changesNothing) whose outcome is unknown: it changed nothing, so there is nothing to undo"

for (const [name, store] of stores) {
  describe(`a read whose outcome is unknown holds nothing up: ${name}`, () => {
    it.effect('onInterrupt: "compensate" with only a read in flight compensates; the read needs no undo', () =>
      Effect.gen(function* () {
        const { book, stock, started, undone } = yield* fixture
        const program = Effect.zipRight(book("1A"), stock("A-1"))
        const fiber = yield* Effect.fork(Saga.run("s1", program, { onInterrupt: "compensate" }))
        yield* Deferred.await(started)
        yield* Fiber.interrupt(fiber)

        expect(undone).toEqual(["1A"])
        const status = yield* Saga.status("s1")
        expect(status.status).toBe("compensated")
        expect(status.steps.map((step) => [step.toolName, step.state, step.undo, step.changesNothing])).toEqual([
          ["book", "executed", "completed", undefined],
          ["stock", "unknown", "skipped", true]
        ])
        const entries = yield* journalOf("s1")
        const read = entries.filter((entry) => entry.toolName === "stock")
        expect(read.map((entry) => [entry.phase, entry.payload])).toEqual([
          [
            "INTENT",
            JSON.stringify({ idempotencyKey: "s1/stock:2dcfc544ba0b9062#1", attempt: 1, changesNothing: true })
          ],
          ["SKIPPED", JSON.stringify({ reason: SKIPPED_READ })]
        ])
        // A call that may change something is not a read; its tool declares an undo, and its INTENT says so.
        const written = entries.find((entry) => entry.phase === "INTENT" && entry.toolName === "book")!
        expect(JSON.parse(written.payload!)).toEqual({
          idempotencyKey: "s1/book:31324e5d14174d79#1",
          attempt: 1,
          undo: true
        })
        expect(yield* Journal.verify("s1")).toMatchObject({ _tag: "Intact" })
      }).pipe(Effect.provide(store()))
    )

    it.effect("a resume runs a read left unknown again, as a new INTENT attempt, and completes", () =>
      Effect.gen(function* () {
        const { book, reads, stock, started } = yield* fixture
        const program = Effect.zipRight(book("1A"), stock("A-1"))
        const fiber = yield* Effect.fork(Saga.run("s2", program))
        yield* Deferred.await(started)
        yield* Fiber.interrupt(fiber)
        expect((yield* Saga.status("s2")).status).toBe("suspended")

        const result = yield* Saga.resume("s2", program)
        expect(result).toMatchObject({ _tag: "Completed", value: 3 })
        expect(reads.count).toBe(2)
        const intents = (yield* journalOf("s2")).filter(
          (entry) => entry.phase === "INTENT" && entry.toolName === "stock"
        )
        expect(intents.map((entry) => JSON.parse(entry.payload!).attempt)).toEqual([1, 2])
      }).pipe(Effect.provide(store()))
    )

    it.effect("Saga.compensate of a saga whose only unknown step is a read compensates it, once", () =>
      Effect.gen(function* () {
        const { book, stock, started, undone } = yield* fixture
        const fiber = yield* Effect.fork(Saga.run("s3", Effect.zipRight(book("1A"), stock("A-1"))))
        yield* Deferred.await(started)
        yield* Fiber.interrupt(fiber)

        const report = yield* Saga.compensate("s3")
        expect(report).toEqual({
          sagaId: "s3",
          status: "compensated",
          undone: [
            { stepId: "stock:2dcfc544ba0b9062#1", toolName: "stock", outcome: "skipped", detail: SKIPPED_READ },
            { stepId: "book:31324e5d14174d79#1", toolName: "book", outcome: "completed" }
          ],
          notUndone: []
        })
        const revision = (yield* Saga.status("s3")).revision
        expect(yield* Saga.compensate("s3")).toEqual(report)
        expect((yield* Saga.status("s3")).revision).toBe(revision)
        expect(undone).toEqual(["1A"])
      }).pipe(Effect.provide(store()))
    )

    it.effect("beside a call whose outcome is unknown, only that call needs an operator", () =>
      Effect.gen(function* () {
        const { blocking, blockingStarted, stock, started, undone } = yield* fixture
        const program = Effect.all([stock("A-1"), blocking("1B")], { concurrency: 2 })
        const fiber = yield* Effect.fork(Saga.run("s4", program, { onInterrupt: "compensate" }))
        yield* Deferred.await(started)
        yield* Deferred.await(blockingStarted)
        yield* Fiber.interrupt(fiber)

        const status = yield* Saga.status("s4")
        expect(status.status).toBe("needs_attention")
        expect(status.steps.map((step) => [step.toolName, step.state, step.changesNothing])).toEqual([
          ["stock", "unknown", true],
          ["blocking", "unknown", undefined]
        ])
        const ended = (yield* journalOf("s4")).at(-1)!
        expect(ended.phase).toBe("SAGA_NEEDS_ATTENTION")
        expect(JSON.parse(ended.payload!).unknown.map((step: { toolName: string }) => step.toolName)).toEqual([
          "blocking"
        ])
        // The console offers to resolve the call, not the read.
        const detail = yield* getSaga("s4")
        expect(detail.steps.map((step) => step.changesNothing)).toEqual([true, undefined])
        const page = Pages.saga(detail, 0)
        expect(page).toContain("Resolve <code>blocking:")
        expect(page).not.toContain("Resolve <code>stock:")

        const report = yield* Saga.compensate("s4")
        expect(report.status).toBe("compensation_failed")
        expect(report.notUndone.map((step) => [step.toolName, step.phase])).toEqual([["blocking", "UNKNOWN"]])
        expect(report.undone.map((step) => [step.toolName, step.outcome])).toEqual([["stock", "skipped"]])
        expect(undone).toEqual([])
      }).pipe(Effect.provide(store()))
    )

    it.effect("an INTENT that does not say it is a read (a journal written before it could) replays as before", () =>
      Effect.gen(function* () {
        const { started } = yield* fixture
        // The same tool as it was declared when the journal was written: nothing said it was a read.
        const before = Compensable.make({
          name: "stock",
          input: Schema.String,
          success: Schema.Int,
          execute: () => Effect.zipRight(Deferred.succeed(started, undefined), Effect.never)
        })
        const fiber = yield* Effect.fork(Saga.run("s5", before("A-1")))
        yield* Deferred.await(started)
        yield* Fiber.interrupt(fiber)

        const { stock } = yield* fixture
        const result = yield* Saga.resume("s5", stock("A-1"))
        expect(result).toMatchObject({
          _tag: "NeedsAttention",
          unknown: [{ toolName: "stock", reason: "INTENT was journaled but no outcome: it may or may not have run" }]
        })
        expect((yield* Saga.status("s5")).steps[0]?.changesNothing).toBeUndefined()
      }).pipe(Effect.provide(store()))
    )

    it.effect("a read the program interrupted and went on without: the saga completes, and replays so", () =>
      Effect.gen(function* () {
        const { book, stock } = yield* fixture
        const program = Effect.gen(function* () {
          const level = yield* Effect.timeout(stock("A-1"), "1 second").pipe(Effect.orElseSucceed(() => -1))
          return [level, yield* book("1A")] as const
        })
        const first = yield* Effect.fork(Saga.run("s6", program))
        yield* TestClock.adjust("1 second")
        expect(yield* Fiber.join(first)).toMatchObject({ _tag: "Completed", value: [-1, "1A"] })
        const revision = (yield* Saga.status("s6")).revision

        // The replay answers nothing for the read, as the first run heard nothing: the program goes on the same way.
        const replay = yield* Effect.fork(Saga.run("s6", program))
        yield* TestClock.adjust("1 second")
        expect(yield* Fiber.join(replay)).toMatchObject({ _tag: "Completed", value: [-1, "1A"] })
        expect((yield* Saga.status("s6")).revision).toBe(revision)
      }).pipe(Effect.provide(store()))
    )

    it.effect("a read whose call times out failed: it is journaled FAILED, no operator is asked", () =>
      Effect.gen(function* () {
        const { book } = yield* fixture
        const slow = Compensable.make({
          name: "slow",
          input: Schema.String,
          success: Schema.Int,
          changesNothing: true,
          timeout: "1 second",
          execute: () => Effect.never
        })
        const seen: Array<unknown> = []
        const program = Effect.gen(function* () {
          yield* book("1A")
          seen.push(yield* Effect.flip(slow("A-1")))
        })
        const first = yield* Effect.fork(Saga.run("s7", program))
        yield* TestClock.adjust("1 second")
        // A failed read taints the saga as any failed step does: it compensates, nobody is asked.
        const result = yield* Fiber.join(first)
        expect(result).toMatchObject({
          _tag: "Compensated",
          report: { notUndone: [{ toolName: "slow", phase: "FAILED" }] }
        })
        const failed = (yield* journalOf("s7")).find((entry) => entry.phase === "FAILED")!
        expect(JSON.parse(failed.payload!)).toEqual({
          description: "outcome unknown: the call started but timed out before it answered",
          defect: false,
          error: { _tag: "OutcomeUnknown", reason: "the call started but timed out before it answered" }
        })
        // Replayed, the program gets the same outcome back.
        expect((yield* Saga.run("s7", program))._tag).toBe("Compensated")
        expect(seen).toHaveLength(2)
        for (const error of seen) expect(error).toBeInstanceOf(Outcome.Unknown)
      }).pipe(Effect.provide(store()))
    )
  })
}

describe("a read an operator resolved as applied stays a read", () => {
  it.effect("compensated in a process without its tool (the CLI), it is passed over as any read that executed", () =>
    Effect.gen(function* () {
      const filename = Path.join(dir, `${Math.random()}.db`)
      const process = () => Saga.layer.pipe(Layer.provideMerge(SqlStore.layerSqlite({ filename })))
      const { stock, started } = yield* fixture
      yield* Effect.gen(function* () {
        const fiber = yield* Effect.fork(Saga.run("r1", stock("A-1")))
        yield* Deferred.await(started)
        yield* Fiber.interrupt(fiber)
        const [read] = (yield* Saga.status("r1")).steps
        yield* Saga.resolve("r1", read!.stepId, { outcome: "applied", result: 3, by: "op" })
      }).pipe(Effect.provide(process()))

      const report = yield* Saga.compensate("r1").pipe(Effect.provide(process()))
      expect(report).toEqual({ sagaId: "r1", status: "compensated", undone: [], notUndone: [] })
    })
  )
})

describe("exploring crashes of a saga with a read", () => {
  it.effect(
    "a read run again after a crash is no problem: it changed nothing",
    () =>
      Effect.gen(function* () {
        const stock = Compensable.make({
          name: "stock",
          input: Schema.String,
          success: Schema.Int,
          changesNothing: true,
          execute: () => Effect.succeed(3)
        })
        // Run again by its key after a crash: only the read could end the saga otherwise than completed.
        const book = Compensable.make({
          name: "book",
          input: Schema.String,
          success: Schema.String,
          retryMode: "idempotency-key",
          execute: (seat) => Effect.succeed(seat),
          compensate: () => Effect.void
        })
        const Trip = SagaDefinition.make("trip", {
          input: Schema.String,
          program: (seat: string) => Effect.zipRight(stock("A-1"), book(seat))
        })
        for (const store of ["memory", "sqlite"] as const) {
          const summary = yield* Testing.exploreCrashes(Trip, "1A", { world: Layer.empty, store })
          expect(summary.endings).toEqual({ Completed: summary.points })
          // Not vacuous: crashes left the read without an outcome, and the recovery ran it again.
          expect(summary.calls.stock!.execute).toBeGreaterThan(summary.points)
        }
      }),
    60_000
  )
})

/**
 * `book` (undone into `undone`), `stock` (a read: its first call signals `started` and never
 * answers, later ones answer 3, each counted in `reads`), and `blocking`, a call that may change
 * something, which signals `blockingStarted` and never answers.
 */
const fixture = Effect.gen(function* () {
  const started = yield* Deferred.make<void>()
  const blockingStarted = yield* Deferred.make<void>()
  const undone: Array<string> = []
  const reads = { count: 0 }
  const book = Compensable.make({
    name: "book",
    input: Schema.String,
    success: Schema.String,
    execute: (seat) => Effect.succeed(seat),
    compensate: (ctx) => Effect.sync(() => undone.push(ctx.input))
  })
  const stock = Compensable.make({
    name: "stock",
    input: Schema.String,
    success: Schema.Int,
    changesNothing: true,
    execute: () =>
      Effect.suspend(() =>
        ++reads.count === 1 ? Effect.zipRight(Deferred.succeed(started, undefined), Effect.never) : Effect.succeed(3)
      )
  })
  const blocking = Compensable.make({
    name: "blocking",
    input: Schema.String,
    success: Schema.String,
    execute: () => Effect.zipRight(Deferred.succeed(blockingStarted, undefined), Effect.never),
    compensate: () => Effect.void
  })
  return { blocking, blockingStarted, book, reads, started, stock, undone }
})

const journalOf = (sagaId: string) => Effect.flatMap(Journal.Journal, (journal) => journal.read(sagaId))
