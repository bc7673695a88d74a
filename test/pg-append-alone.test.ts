/**
 * PostgreSQL through `Postgres.layerClient`: an append that stays alone is sent straight, without
 * group commit (src/internal/sql/pgAppend.ts); appends that arrive together still share group
 * commit's one statement. Group commit is observed by wrapping it: every batch it commits is noted.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Either, type Exit, Layer, Option } from "effect"
import { vi } from "vitest"
import { Journal, Saga, SqlJournal } from "../src/index.js"
import * as Postgres from "../src/Postgres.js"
import { saga, step } from "./fixtures/drafts.js"
import { countingStatements, threeSteps } from "./fixtures/pg-statements.js"
import { freshDatabase } from "./fixtures/postgres.js"

/** The size of every batch of appends group commit committed (its batches of reads are left out). */
const appendBatches = vi.hoisted(() => [] as Array<number>)

vi.mock("../src/internal/sql/groupCommit.js", async (importOriginal) => {
  const original = await importOriginal<typeof import("../src/internal/sql/groupCommit.js")>()
  return {
    groupCommit: <In, A, E>(commit: (batch: ReadonlyArray<In>) => Effect.Effect<ReadonlyArray<Exit.Exit<A, E>>>) =>
      original.groupCommit((batch: ReadonlyArray<In>) => {
        if (typeof batch[0] !== "string") appendBatches.push(batch.length)
        return commit(batch)
      })
  }
})

const url = await freshDatabase("effect_saga_alone")

describe("PostgreSQL: an append that stays alone is sent straight", () => {
  it.live("one saga at a time, no append goes through group commit; the saga's journal is whole", () =>
    Effect.gen(function* () {
      const [result, batches] = yield* groupCommitted(Saga.run("alone", threeSteps))
      expect(result._tag).toBe("Completed")
      expect(batches).toEqual([])
      const journal = yield* Journal.Journal
      const entries = yield* journal.read("alone")
      expect(entries.map((entry) => entry.phase)).toEqual([
        "SAGA_STARTED",
        ...["INTENT", "EXECUTED", "INTENT", "EXECUTED", "INTENT", "EXECUTED"],
        "SAGA_COMPLETED"
      ])
      expect(Journal.verifyAgainst(entries, Option.getOrUndefined(yield* journal.get("alone")), undefined)._tag).toBe(
        "Intact"
      )
    }).pipe(Effect.provide(Saga.layer.pipe(Layer.provideMerge(Postgres.layer({ url })))), Effect.scoped)
  )

  it.live("appends that arrive together still go through group commit, as one batch and one statement", () =>
    Effect.gen(function* () {
      const journal = yield* Journal.Journal
      yield* journal.append("before", Journal.empty, [saga("SAGA_STARTED")])
      const [[written, sent], batches] = yield* groupCommitted(
        countingStatements(
          Effect.all(
            Array.from({ length: 10 }, (_, n) =>
              journal.append(`together-${n}`, Journal.empty, [saga("SAGA_STARTED"), step("INTENT", "a")])
            ),
            { concurrency: "unbounded" }
          )
        )
      )
      expect(batches).toEqual([10])
      expect(sent).toBe(1)
      expect(written.map((entries) => entries.map((entry) => entry.seq))).toEqual(written.map(() => [1, 2]))
    }).pipe(Effect.provide(Postgres.layerJournal({ url })))
  )

  it.live(
    "refusals sent straight stay typed: a stale position is a ConcurrencyConflict, another's live lease LeaseHeld, and neither writes",
    () =>
      Effect.gen(function* () {
        const open = Effect.map(Layer.build(Layer.fresh(Postgres.layerJournal({ url }))), Context.get(Journal.Journal))
        const [mine, theirs] = yield* Effect.all([open, open])
        const [started] = yield* theirs!.append("contested", Journal.empty, [saga("SAGA_STARTED")], other)
        const [refusals, batches] = yield* groupCommitted(
          Effect.all([
            Effect.flip(mine!.append("contested", Journal.empty, [saga("SAGA_STARTED")], me)),
            Effect.flip(mine!.append("contested", { revision: 1, digest: started!.hash }, [step("INTENT", "a")], me))
          ])
        )
        expect(batches).toEqual([])
        expect(refusals).toMatchObject([
          { _tag: "ConcurrencyConflict", sagaId: "contested", expectedRevision: 0, actualRevision: 1 },
          { _tag: "LeaseHeld", sagaId: "contested", owner: "other-host" }
        ])
        expect((yield* mine!.read("contested")).map((entry) => entry.phase)).toEqual(["SAGA_STARTED"])
        expect(Option.getOrThrow(yield* mine!.get("contested"))).toMatchObject({
          revision: 1,
          lease: { owner: "other-host" }
        })
      }).pipe(Effect.scoped)
  )

  it.live(
    "an append of more than 64 entries goes through group commit; one inside a caller's transaction is written in it",
    () =>
      Effect.gen(function* () {
        const journal = yield* Journal.Journal
        const sql = yield* SqlClient.SqlClient
        const many = [saga("SAGA_STARTED"), ...Array.from({ length: 64 }, (_, n) => step("INTENT", `s-${n}`))]
        const [written, batches] = yield* groupCommitted(journal.append("many", Journal.empty, many))
        expect(written.length).toBe(65)
        expect(batches).toEqual([1])
        expect((yield* journal.read("many")).length).toBe(65)

        const [rolledBack, inside] = yield* groupCommitted(
          Effect.either(
            sql.withTransaction(
              Effect.zipRight(
                journal.append("rolled-back", Journal.empty, [saga("SAGA_STARTED")]),
                Effect.fail("abort" as const)
              )
            )
          )
        )
        expect(Either.getLeft(rolledBack)).toEqual(Option.some("abort"))
        expect(inside).toEqual([])
        expect(yield* journal.read("rolled-back")).toEqual([])
      }).pipe(Effect.provide(SqlJournal.layer.pipe(Layer.provideMerge(Postgres.layerClient({ url })))))
  )
})

const other = { owner: "other-host", ttlMillis: 60_000 }
const me = { owner: "me", ttlMillis: 60_000 }

/** Runs `effect`; its value, and the batches of appends group commit committed meanwhile. */
const groupCommitted = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.suspend(() => {
    const before = appendBatches.length
    return Effect.map(effect, (value) => [value, appendBatches.slice(before)] as const)
  })
