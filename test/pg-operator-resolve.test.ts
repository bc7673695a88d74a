/** The operator's resolutions of test/operator-resolve.test.ts, on PostgreSQL. */
import { assert, describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Journal, Saga } from "../src/index.js"
import * as Postgres from "../src/Postgres.js"
import * as Testing from "../src/Testing.js"
import { freshDatabase } from "./fixtures/postgres.js"
import { checkout } from "./fixtures/undo-order.js"

const url = await freshDatabase("effect_saga_operator_resolve")
const OnPostgres = Saga.layer.pipe(Layer.provideMerge(Postgres.layer({ url })))

describe("Saga.resolve on PostgreSQL", () => {
  it.effect("refuses --applied once compensation undid a step that ran before the unknown one", () =>
    Effect.gen(function* () {
      const { reserveThenCharge, undone } = checkout()
      const first = yield* Saga.run("pg-late", reserveThenCharge).pipe(
        Effect.provide(Testing.faults({ tool: "charge", fault: "unknown" }))
      )
      assert(first._tag === "NeedsAttention")
      const stepId = first.unknown[0]!.stepId
      expect((yield* Saga.compensate("pg-late")).status).toBe("compensation_failed")
      const refused = yield* Effect.flip(
        Saga.resolve("pg-late", stepId, { outcome: "applied", by: "carol", result: "ch-4200" })
      )
      expect(refused._tag).toBe("CommandRefused")
      expect(refused.message).toContain("out of reverse order")
      yield* Saga.resolve("pg-late", stepId, { outcome: "not-applied", by: "carol" })
      expect(undone).toEqual(["reserve"])
    }).pipe(Effect.provide(OnPostgres))
  )

  it.effect("an explicit undo that answered unknown is settled by resolving its run, then pruned with its saga", () =>
    Effect.gen(function* () {
      const { reserveThenCharge } = checkout()
      const done = yield* Saga.run("pg-x", reserveThenCharge).pipe(
        Effect.provide(Testing.faults({ tool: "charge", on: "compensate", at: 1, fault: "unknown" }))
      )
      expect(done._tag).toBe("Completed")
      const charge = (yield* Saga.status("pg-x")).steps.find((step) => step.toolName === "charge")!
      const answer = yield* Saga.compensateEffect(charge.effectId)
      assert(answer._tag === "Settled" && answer.outcome === "unknown")
      yield* Saga.resolve(answer.runId, charge.stepId, { outcome: "applied", by: "carol" })
      expect((yield* Saga.status(answer.runId)).status).toBe("completed")
      expect((yield* Saga.compensate("pg-x")).status).toBe("compensated")
      const journal = yield* Journal.Journal
      // The database is the file's: the other test's saga, finished, is pruned too.
      const pruned = yield* journal.prune("2099-01-01T00:00:00Z")
      expect(pruned.filter((id) => id.startsWith("pg-x")).sort()).toEqual([answer.runId, "pg-x"].sort())
    }).pipe(Effect.provide(OnPostgres))
  )
})
