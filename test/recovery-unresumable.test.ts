/**
 * What recovery does with a saga it cannot resume (`Unrecoverable`, a program that no longer
 * replays it, a journal that does not verify): `Recovery.layer` logs it (which saga, which error,
 * what to do), once; later passes of the same worker leave it alone while its journal stays where
 * it was, and try it again once it moves.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Logger, Option, Schema, TestClock } from "effect"
import { Approval, Compensable, Journal, Recovery, Saga, SagaDefinition } from "../src/index.js"
import * as RecoveryMemory from "../src/internal/engine/recoveryMemory.js"
import { makeMemoryJournal } from "../src/internal/journal/memory.js"

/**
 * A memory store; `forge` makes `read` answer a saga's entries with one payload edited (`unforge`
 * stops it). `calls` counts the reads and claims of each saga (`read o-1`, `claim o-1`).
 */
const makeStore = () => {
  const inner = makeMemoryJournal()
  const forged = new Set<string>()
  const calls: Array<string> = []
  const journal = Journal.Journal.of({
    ...inner,
    read: (sagaId) =>
      Effect.map(
        Effect.zipRight(
          Effect.sync(() => calls.push(`read ${sagaId}`)),
          inner.read(sagaId)
        ),
        (entries) =>
          forged.has(sagaId) && entries.length > 1
            ? entries.map((entry, index) => (index === 1 ? { ...entry, input: '"edited"' } : entry))
            : entries
      ),
    claim: (sagaId, holder) =>
      Effect.zipRight(
        Effect.sync(() => calls.push(`claim ${sagaId}`)),
        inner.claim(sagaId, holder)
      )
  })
  const layer = Layer.merge(
    Layer.succeed(Journal.Journal, journal),
    Layer.succeed(Approval.Approval, Approval.makeMemory())
  )
  return {
    journal: inner,
    layer,
    calls,
    forge: (sagaId: string) => forged.add(sagaId),
    unforge: (sagaId: string) => forged.delete(sagaId)
  }
}
type Store = ReturnType<typeof makeStore>

const worker = (store: Store, owner: string) =>
  Saga.layerWith({ owner, leaseTtl: "30 seconds" }).pipe(Layer.provideMerge(store.layer))

const noted = Compensable.make({
  name: "noted",
  input: Schema.String,
  success: Schema.String,
  execute: (id) => Effect.succeed(`noted:${id}`),
  compensate: () => Effect.void
})

/** A program that takes a step, then is interrupted: the saga ends suspended, left for recovery. */
const stopsAfterAStep = (id: string) => Effect.zipRight(noted(id), Effect.interrupt)

const Lost = SagaDefinition.make("lost", { input: Schema.String, program: stopsAfterAStep })
const Known = SagaDefinition.make("known", { input: Schema.String, program: (id: string) => noted(id) })

/** Leaves behind: `plain` (started with Saga.run), `lost-1` (from a definition recovery is not given). */
const leaveBehind = (store: Store) =>
  Effect.gen(function* () {
    const a = yield* Layer.build(worker(store, "worker-a"))
    expect((yield* Effect.provide(Saga.run("plain", stopsAfterAStep("plain")), a))._tag).toBe("Suspended")
    expect((yield* Effect.provide(Saga.start(Lost, "lost-1", "lost-1"), a))._tag).toBe("Suspended")
    return a
  })

const withLogs = <A, E, R>(body: (lines: Array<string>) => Effect.Effect<A, E, R>) => {
  const lines: Array<string> = []
  const keeping = Logger.make(({ logLevel, message }) => {
    lines.push(`${logLevel.label} ${(Array.isArray(message) ? message : [message]).map(String).join(" ")}`)
  })
  return Effect.provide(body(lines), Logger.replace(Logger.defaultLogger, keeping))
}

const recordOf = (store: Store, sagaId: string) =>
  Effect.map(store.journal.get(sagaId), (record) => Option.getOrThrow(record))

describe("a saga recovery cannot resume", () => {
  it.scoped(
    "Recovery.layer logs each one: its id, its error's tag and message, and what to do; a tampered one at ERROR",
    () =>
      withLogs((lines) =>
        Effect.gen(function* () {
          const store = makeStore()
          const a = yield* leaveBehind(store)
          expect((yield* Effect.provide(Saga.start(Lost, "edited-1", "edited-1"), a))._tag).toBe("Suspended")
          store.forge("edited-1")
          yield* Layer.build(
            Recovery.layer({ definitions: [Known], every: "startup" }).pipe(
              Layer.provideMerge(worker(store, "worker-b"))
            )
          )
          yield* Effect.repeat(Effect.yieldNow(), { until: () => lines.length >= 4, times: 1000 })
          const about = (sagaId: string) => lines.filter((line) => line.includes(`saga ${sagaId}:`))
          expect(about("plain")).toEqual([
            expect.stringMatching(
              /^WARN effect-saga: recovery did not resume saga plain: Unrecoverable: saga plain cannot be recovered here: it was not started from a definition; .*Saga\.resume.*effect-saga compensate plain/
            )
          ])
          expect(about("lost-1")).toEqual([
            expect.stringMatching(
              /^WARN effect-saga: recovery did not resume saga lost-1: Unrecoverable: saga lost-1 cannot be recovered here: this worker was not given definition lost; give definition lost to a worker's Recovery/
            )
          ])
          expect(about("edited-1")).toEqual([
            expect.stringMatching(/^ERROR effect-saga: recovery did not resume saga edited-1: JournalTampered: /)
          ])
          expect(lines).toContain("INFO effect-saga: recovery took 3 saga(s) left behind: 3 Failed")
        })
      )
  )

  it.scoped("an input that no longer decodes is logged without the decoding error, which may quote the input", () =>
    withLogs((lines) =>
      Effect.gen(function* () {
        const store = makeStore()
        const a = yield* Layer.build(worker(store, "worker-a"))
        const Before = SagaDefinition.make("changed", { input: Schema.String, program: stopsAfterAStep })
        expect((yield* Effect.provide(Saga.start(Before, "c-1", "SECRET-INPUT-42"), a))._tag).toBe("Suspended")
        const After = SagaDefinition.make("changed", { input: Schema.Number, program: () => Effect.void })
        const b = yield* Layer.build(
          Recovery.layer({ definitions: [After], every: "startup" }).pipe(Layer.provideMerge(worker(store, "worker-b")))
        )
        yield* Effect.repeat(Effect.yieldNow(), { until: () => lines.length >= 2, times: 1000 })
        expect(lines.find((line) => line.startsWith("WARN"))).toMatch(
          /^WARN effect-saga: recovery did not resume saga c-1: Unrecoverable: saga c-1 cannot be recovered here: its input no longer decodes with its definition's input schema \(Recovery\.resume of the saga, or recoverAll's report, fails with the error that says why\); a worker whose definition decodes its input/
        )
        expect(lines.join("\n")).not.toContain("SECRET-INPUT-42")
        // The report's error has the detail.
        const report = yield* Effect.provide(Recovery.make({ definitions: [After] }), b).pipe(
          Effect.flatMap((recovery) => recovery.recoverAll)
        )
        expect(report.sagas[0]?._tag === "Failed" && report.sagas[0].error.message).toContain("SECRET-INPUT-42")
      })
    )
  )

  it.scoped("later passes leave it alone, unreported and unlogged, while its journal stays where it was", () =>
    withLogs((lines) =>
      Effect.gen(function* () {
        const store = makeStore()
        yield* leaveBehind(store)
        yield* Layer.build(
          Recovery.layer({ definitions: [Known], every: "1 minute" }).pipe(
            Layer.provideMerge(worker(store, "worker-b"))
          )
        )
        yield* Effect.repeat(Effect.yieldNow(), { until: () => lines.length >= 3, times: 1000 })
        for (let pass = 0; pass < 3; pass++) yield* TestClock.adjust("1 minute")
        yield* Effect.repeat(Effect.yieldNow(), { times: 100 })
        expect(lines.filter((line) => line.includes("saga plain:"))).toHaveLength(1)
        expect(lines.filter((line) => line.includes("saga lost-1:"))).toHaveLength(1)
        expect(lines.filter((line) => line.startsWith("INFO"))).toHaveLength(1)
        // Given back at each pass's end: a worker with the definition can take it.
        expect((yield* recordOf(store, "lost-1")).lease).toBeNull()
        expect((yield* recordOf(store, "plain")).lease).toBeNull()
      })
    )
  )

  it.scoped("a pass tries it again once its journal moved; one that has the definition resumes it", () =>
    Effect.gen(function* () {
      const store = makeStore()
      const a = yield* leaveBehind(store)
      const b = yield* Layer.build(worker(store, "worker-b"))
      const recovery = yield* Effect.provide(Recovery.make({ definitions: [Known] }), b)
      const failed = (report: Recovery.RecoveryReport) =>
        report.sagas.map((saga) => [saga.sagaId, saga._tag === "Failed" ? saga.error._tag : saga._tag])
      // Left behind at the same time: claimed in saga id order, as the SQL stores claim them.
      expect(failed(yield* recovery.recoverAll)).toEqual([
        ["lost-1", "Unrecoverable"],
        ["plain", "Unrecoverable"]
      ])
      expect(failed(yield* recovery.recoverAll)).toEqual([])
      // Run again by its program, which takes one more step and is interrupted: its journal moved on.
      const further = Effect.zipRight(noted("plain"), stopsAfterAStep("plain, further"))
      expect((yield* Effect.provide(Saga.run("plain", further), a))._tag).toBe("Suspended")
      expect(failed(yield* recovery.recoverAll)).toEqual([["plain", "Unrecoverable"]])
      // Recovery.resume is asked for one saga: it answers every time.
      expect((yield* Effect.flip(recovery.resume("lost-1")))._tag).toBe("Unrecoverable")

      const c = yield* Layer.build(worker(store, "worker-c"))
      const withDefinition = yield* Effect.provide(Recovery.make({ definitions: [Lost] }), c)
      expect(failed(yield* withDefinition.recoverAll).sort()).toEqual([
        ["lost-1", "Resumed"],
        ["plain", "Unrecoverable"]
      ])
    })
  )

  it.scoped("sagas it leaves alone do not keep a pass from the others, whatever the batch size", () =>
    Effect.gen(function* () {
      const store = makeStore()
      const a = yield* leaveBehind(store)
      const b = yield* Layer.build(worker(store, "worker-b"))
      const recovery = yield* Effect.provide(Recovery.make({ definitions: [Known], batchSize: 1 }), b)
      expect((yield* recovery.recoverAll).sagas).toHaveLength(2)
      const Later = SagaDefinition.make("known", { input: Schema.String, program: stopsAfterAStep })
      expect((yield* Effect.provide(Saga.start(Later, "k-1", "k-1"), a))._tag).toBe("Suspended")
      const report = yield* recovery.recoverAll
      expect(report.sagas.map((saga) => [saga.sagaId, saga._tag])).toEqual([["k-1", "Resumed"]])
      expect((yield* recordOf(store, "k-1")).status).toBe("completed")
    })
  )

  it.scoped(
    "a program that no longer replays its journal (NonDeterminism) is tried, claimed and logged once; again once its journal moved",
    () =>
      withLogs((lines) =>
        Effect.gen(function* () {
          const store = makeStore()
          const a = yield* Layer.build(worker(store, "worker-a"))
          const Before = SagaDefinition.make("changing", { input: Schema.String, program: stopsAfterAStep })
          expect((yield* Effect.provide(Saga.start(Before, "nd-1", "nd-1"), a))._tag).toBe("Suspended")
          // Deployed since: its program calls noted with another input where the journal has its first call.
          let replays = 0
          const After = SagaDefinition.make("changing", {
            input: Schema.String,
            program: (id: string) =>
              Effect.zipRight(
                Effect.sync(() => replays++),
                noted(`${id}, changed`)
              )
          })
          yield* Layer.build(
            Recovery.layer({ definitions: [After], every: "1 minute" }).pipe(
              Layer.provideMerge(worker(store, "worker-b"))
            )
          )
          const about = () => lines.filter((line) => line.includes("saga nd-1:"))
          yield* Effect.repeat(Effect.yieldNow(), { until: () => about().length >= 1, times: 1000 })
          expect(about()).toEqual([
            expect.stringMatching(
              /^WARN effect-saga: recovery did not resume saga nd-1: NonDeterminism: saga nd-1 did not replay as journaled at step .*; this worker does not try it again while its journal stays where it is$/
            )
          ])
          const claims = () => store.calls.filter((call) => call === "claim nd-1").length
          expect([replays, claims()]).toEqual([1, 1])

          for (let pass = 0; pass < 3; pass++) yield* TestClock.adjust("1 minute")
          yield* Effect.repeat(Effect.yieldNow(), { times: 100 })
          expect(about()).toHaveLength(1)
          // Not run again, and its lease not taken by a run again (the pass's own claim gives it back).
          expect([replays, claims()]).toEqual([1, 1])
          expect((yield* recordOf(store, "nd-1")).lease).toBeNull()

          // Run again by the program it was started with, one step further: its journal moved.
          const further = Effect.zipRight(noted("nd-1"), stopsAfterAStep("nd-1, further"))
          expect((yield* Effect.provide(Saga.resume("nd-1", further), a))._tag).toBe("Suspended")
          yield* TestClock.adjust("1 minute")
          yield* Effect.repeat(Effect.yieldNow(), { until: () => about().length >= 2, times: 1000 })
          expect(about()).toHaveLength(2)
          expect(replays).toBe(2)
        })
      )
  )

  it.scoped(
    "a journal that does not verify (JournalTampered) is logged once at ERROR, not read again; again once its row moved",
    () =>
      withLogs((lines) =>
        Effect.gen(function* () {
          const store = makeStore()
          const a = yield* Layer.build(worker(store, "worker-a"))
          expect((yield* Effect.provide(Saga.start(Lost, "t-1", "t-1"), a))._tag).toBe("Suspended")
          store.forge("t-1")
          yield* Layer.build(
            Recovery.layer({ definitions: [Known, Lost], every: "1 minute" }).pipe(
              Layer.provideMerge(worker(store, "worker-b"))
            )
          )
          const about = () => lines.filter((line) => line.includes("saga t-1:"))
          yield* Effect.repeat(Effect.yieldNow(), { until: () => about().length >= 1, times: 1000 })
          expect(about()).toEqual([
            expect.stringMatching(
              /^ERROR effect-saga: recovery did not resume saga t-1: JournalTampered: journal of saga t-1 does not verify at seq 2 .*; nothing was run or written; this worker does not try it again while its journal stays where it is$/
            )
          ])
          const reads = () => store.calls.filter((call) => call === "read t-1").length
          const readsAfterFirstPass = reads()

          for (let pass = 0; pass < 3; pass++) yield* TestClock.adjust("1 minute")
          yield* Effect.repeat(Effect.yieldNow(), { times: 100 })
          expect(about()).toHaveLength(1)
          expect(reads()).toBe(readsAfterFirstPass)
          expect(store.calls).not.toContain("claim t-1")
          expect((yield* recordOf(store, "t-1")).lease).toBeNull()

          // Written to (here: restored, run one step further, and edited again): its row moved.
          store.unforge("t-1")
          const further = Effect.zipRight(noted("t-1"), stopsAfterAStep("t-1, further"))
          expect((yield* Effect.provide(Saga.resume("t-1", further), a))._tag).toBe("Suspended")
          store.forge("t-1")
          yield* TestClock.adjust("1 minute")
          yield* Effect.repeat(Effect.yieldNow(), { until: () => about().length >= 2, times: 1000 })
          expect(about().map((line) => line.split(":")[0])).toEqual(["ERROR effect-saga", "ERROR effect-saga"])
        })
      )
  )

  it.scoped(
    "a journal whose entries no longer decode with the program's schemas (JournalCorrupted) is tried and logged once; again once its journal moved",
    () =>
      withLogs((lines) =>
        Effect.gen(function* () {
          const store = makeStore()
          const a = yield* Layer.build(worker(store, "worker-a"))
          const Before = SagaDefinition.make("reshaped", { input: Schema.String, program: stopsAfterAStep })
          expect((yield* Effect.provide(Saga.start(Before, "jc-1", "jc-1"), a))._tag).toBe("Suspended")
          // Deployed since: the same tool, its result now a number: the journaled result does not decode.
          let replays = 0
          const reshaped = Compensable.make({
            name: "noted",
            input: Schema.String,
            success: Schema.Number,
            execute: () => Effect.succeed(1),
            compensate: () => Effect.void
          })
          const After = SagaDefinition.make("reshaped", {
            input: Schema.String,
            program: (id: string) =>
              Effect.zipRight(
                Effect.sync(() => replays++),
                reshaped(id)
              )
          })
          yield* Layer.build(
            Recovery.layer({ definitions: [After], every: "1 minute" }).pipe(
              Layer.provideMerge(worker(store, "worker-b"))
            )
          )
          const about = () => lines.filter((line) => line.includes("saga jc-1:"))
          yield* Effect.repeat(Effect.yieldNow(), { until: () => about().length >= 1, times: 1000 })
          expect(about()).toEqual([
            expect.stringMatching(
              /^[A-Z]+ effect-saga: recovery did not resume saga jc-1: JournalCorrupted: .*; this worker does not try it again while its journal stays where it is$/
            )
          ])
          // The journaled result it quotes is data: it never goes to the log.
          expect(about()[0]).toContain("Expected number")
          expect(about()[0]).not.toContain("noted:jc-1")
          const claims = () => store.calls.filter((call) => call === "claim jc-1").length
          expect([replays, claims()]).toEqual([1, 1])

          for (let pass = 0; pass < 3; pass++) yield* TestClock.adjust("1 minute")
          yield* Effect.repeat(Effect.yieldNow(), { times: 100 })
          expect(about()).toHaveLength(1)
          expect([replays, claims()]).toEqual([1, 1])
          expect((yield* recordOf(store, "jc-1")).lease).toBeNull()

          // Run again by the program it was started with, one step further: its journal moved.
          const further = Effect.zipRight(noted("jc-1"), stopsAfterAStep("jc-1, further"))
          expect((yield* Effect.provide(Saga.resume("jc-1", further), a))._tag).toBe("Suspended")
          yield* TestClock.adjust("1 minute")
          yield* Effect.repeat(Effect.yieldNow(), { until: () => about().length >= 2, times: 1000 })
          expect(about()).toHaveLength(2)
          expect(replays).toBe(2)
        })
      )
  )

  it("a worker remembers a bounded number of them: past it, the one remembered longest is forgotten", () => {
    const memory = RecoveryMemory.make(2)
    const at = (sagaId: string, revision: number) =>
      ({ sagaId, revision, digest: `d${revision}` }) as unknown as Journal.SagaRecord
    memory.remember(at("a", 1))
    memory.remember(at("b", 1))
    memory.remember(at("c", 1))
    expect(["a", "b", "c"].map((id) => memory.knows(at(id, 1)))).toEqual([false, true, true])
    expect(memory.knows(at("b", 2))).toBe(false)
    memory.keepOnly(new Set(["c"]))
    expect(["b", "c"].map((id) => memory.knows(at(id, 1)))).toEqual([false, true])
  })
})
