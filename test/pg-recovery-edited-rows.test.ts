/**
 * Recovery on PostgreSQL past rows edited by hand: a lease whose end is not a time as the store
 * writes one never lapses (the saga is not claimed, run or overwritten), and a row that does not
 * decode, claimed again at every claim because leases are shorter than a claim, does not keep a
 * pass from the sagas behind it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Layer, Logger, Schema } from "effect"
import { Compensable, Journal, Recovery, Saga, SagaDefinition } from "../src/index.js"
import { listUnclaimable } from "../src/internal/journal/storedRows.js"
import * as Postgres from "../src/Postgres.js"
import { editedLeaseEnds, lapsedLeaseEnds } from "./fixtures/editedLeaseEnds.js"
import { freshDatabase, queryOn } from "./fixtures/postgres.js"
import { warningsLogged } from "./fixtures/warnings.js"

let interrupting = true

const noted = Compensable.make({
  name: "noted",
  input: Schema.String,
  success: Schema.String,
  execute: (id) => Effect.succeed(`noted-${id}`),
  compensate: () => Effect.void
})

/** A step, then a stop while `interrupting`: the saga is left suspended with its step journaled. */
const Edited = SagaDefinition.make("edited", {
  input: Schema.String,
  program: (id: string) =>
    Effect.zipRight(
      noted(id),
      Effect.suspend(() => (interrupting ? Effect.interrupt : Effect.void))
    )
})

/** The sagas `ids`, each left suspended on the database at `url`. */
const leftSuspended = (url: string, ids: ReadonlyArray<string>) =>
  Effect.forEach(ids, (sagaId) => Effect.exit(Saga.start(Edited, sagaId, sagaId)), { discard: true }).pipe(
    Effect.provide(Saga.layer.pipe(Layer.provide(Postgres.layer({ url })))),
    Effect.ensuring(Effect.sync(() => (interrupting = false)))
  )

const query = (url: string, statement: string) => Effect.promise(() => queryOn(url, statement))

describe("recovery on PostgreSQL past rows edited by hand", () => {
  it.scopedLive(
    "a lease whose end was edited out of the stored form never lapses, wherever it sorts: the saga is not claimed, run or overwritten",
    () =>
      Effect.gen(function* () {
        const url = yield* Effect.promise(() => freshDatabase("effect_saga_edited_lease"))
        const [edits, lapsed] = [editedLeaseEnds, lapsedLeaseEnds]
        interrupting = true
        yield* leftSuspended(url, ["a-healthy", ...Object.keys(edits), ...Object.keys(lapsed)])
        for (const [sagaId, expiresAt] of Object.entries({ ...edits, ...lapsed })) {
          yield* query(
            url,
            `UPDATE effect_saga_sagas SET lease_owner = 'w9', lease_expires_at = '${expiresAt}' WHERE saga_id = '${sagaId}'`
          )
        }
        const worker = Saga.layerWith({ owner: "w2" }).pipe(Layer.provideMerge(Postgres.layer({ url })))
        const outcome = yield* Effect.gen(function* () {
          const recovery = yield* Recovery.make({ definitions: [Edited] })
          const report = yield* recovery.recoverAll
          const refusals = yield* Effect.forEach(Object.keys(edits), (sagaId) => Effect.flip(recovery.resume(sagaId)))
          return { report, refusals }
        }).pipe(Effect.provide(worker))
        expect(outcome.report.sagas.map((saga) => [saga.sagaId, saga._tag])).toEqual([
          ["a-healthy", "Resumed"],
          ["i-leap-day", "Resumed"]
        ])
        for (const refused of outcome.refusals)
          expect(refused).toMatchObject({ _tag: "JournalTampered", problem: "row" })
        const leases = yield* query(
          url,
          "SELECT saga_id, lease_owner, lease_expires_at FROM effect_saga_sagas WHERE saga_id NOT IN ('a-healthy', 'i-leap-day') ORDER BY saga_id"
        )
        expect(leases).toEqual(
          Object.entries(edits).map(([sagaId, expiresAt]) => ({
            saga_id: sagaId,
            lease_owner: "w9",
            lease_expires_at: expiresAt
          }))
        )
        // What Recovery.layer names as left behind and never claimed: each of them, and why.
        const unclaimable = yield* Effect.flatMap(Journal.Journal, (journal) => listUnclaimable(journal, 100)).pipe(
          Effect.provide(Postgres.layer({ url }))
        )
        expect(unclaimable).toEqual(
          Object.entries(edits).map(([sagaId, expiresAt]) => ({
            sagaId,
            reason: `the stored row of saga ${sagaId} does not decode: lease's expiresAt ${JSON.stringify(expiresAt)} is not a time as the store writes one (2025-01-31T12:00:00.000Z)`
          }))
        )
      })
  )

  it.scopedLive(
    "with 1 ms leases and batchSize 1, a row that does not decode first does not keep the pass from the sagas behind it",
    () =>
      Effect.gen(function* () {
        const url = yield* Effect.promise(() => freshDatabase("effect_saga_short_lease"))
        const healthy = Array.from({ length: 6 }, (_, i) => `healthy-${i}`)
        interrupting = true
        yield* leftSuspended(url, ["broken", ...healthy])
        yield* query(
          url,
          "UPDATE effect_saga_sagas SET created_at = 'garbage', updated_at = '1900-01-01T00:00:00.000Z' WHERE saga_id = 'broken'"
        )
        const { warnings, logger } = warningsLogged()
        const worker = Saga.layerWith({ owner: "w2", leaseTtl: Duration.millis(1) }).pipe(
          Layer.provideMerge(Postgres.layer({ url }))
        )
        const report = yield* Effect.flatMap(
          Recovery.make({ definitions: [Edited], batchSize: 1 }),
          (recovery) => recovery.recoverAll
        ).pipe(Effect.provide(worker), Effect.provide(Logger.replace(Logger.defaultLogger, logger)))
        expect(report.sagas.map((saga) => saga.sagaId).sort()).toEqual(healthy)
        expect(report.sagas.every((saga) => saga._tag === "Resumed")).toBe(true)
        expect(warnings.length).toBeGreaterThan(0)
        for (const warning of warnings) expect(warning).toContain("the stored row of saga broken does not decode")
      })
  )
})
