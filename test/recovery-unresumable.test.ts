/**
 * What recovery does with a saga it cannot resume: `Recovery.layer` logs it (which saga, which
 * error, what to do), once; later passes of the same worker leave it alone while its journal stays
 * where it was, and try it again once it moves.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Logger, Option, Schema, TestClock } from "effect"
import { Approval, Compensable, Journal, Recovery, Saga, SagaDefinition } from "../src/index.js"
import * as RecoveryMemory from "../src/internal/engine/recoveryMemory.js"
import { makeMemoryJournal } from "../src/internal/journal/memory.js"

/** A memory store; `forge` makes `read` answer a saga's entries with one payload edited. */
const makeStore = () => {
  const inner = makeMemoryJournal()
  const forged = new Set<string>()
  const journal = Journal.Journal.of({
    ...inner,
    read: (sagaId) =>
      Effect.map(inner.read(sagaId), (entries) =>
        forged.has(sagaId) && entries.length > 1
          ? entries.map((entry, index) => (index === 1 ? { ...entry, input: '"edited"' } : entry))
          : entries
      )
  })
  const layer = Layer.merge(
    Layer.succeed(Journal.Journal, journal),
    Layer.succeed(Approval.Approval, Approval.makeMemory())
  )
  return { journal: inner, layer, forge: (sagaId: string) => forged.add(sagaId) }
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
              /^WARN effect-saga: recovery did not resume saga plain: Unrecoverable: saga plain cannot be recovered here: it was not started from a definition\. .*Saga\.resume.*effect-saga compensate plain/
            )
          ])
          expect(about("lost-1")).toEqual([
            expect.stringMatching(
              /^WARN effect-saga: recovery did not resume saga lost-1: Unrecoverable: saga lost-1 cannot be recovered here: this worker was not given definition lost\. give definition lost to a worker's Recovery/
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
          /^WARN effect-saga: recovery did not resume saga c-1: Unrecoverable: saga c-1 cannot be recovered here: its input no longer decodes with its definition's input schema \(the report's error says why\)\. /
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
      expect(failed(yield* recovery.recoverAll)).toEqual([
        ["plain", "Unrecoverable"],
        ["lost-1", "Unrecoverable"]
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
