/**
 * A reject sent again to the HTTP API after one that stopped mid-way (its process ended during an
 * undo): it finishes the compensation that rejection started, and says so, not "rejected by".
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { Approval, Authority, Journal, Saga } from "../src/index.js"
import * as Commands from "../src/internal/http/commands.js"
import { payout, pingCarrier, reserveFunds, sendWireTransfer } from "./fixtures/http-saga.js"

/** A memory journal that refuses `COMPENSATED` while `killed` is set, as a process ended at that write. */
const killable = (killed: { value: boolean }) =>
  Layer.effect(
    Journal.Journal,
    Effect.map(Journal.Journal, (journal) =>
      Journal.Journal.of({
        ...journal,
        append: (sagaId, expected, drafts, holder) =>
          killed.value && drafts.some((draft) => draft.phase === "COMPENSATED")
            ? Effect.fail(new Journal.JournalError({ operation: "append", reason: "the process was killed" }))
            : journal.append(sagaId, expected, drafts, holder)
      })
    )
  ).pipe(Layer.provide(Journal.layerMemory))

const services = (killed: { value: boolean }) =>
  Saga.layer.pipe(
    Layer.tap((context) => Context.get(context, Saga.Saga).register([reserveFunds, sendWireTransfer, pingCarrier])),
    Layer.provideMerge(Layer.merge(killable(killed), Approval.layerMemory))
  )

describe("the HTTP API's reject sent again", () => {
  it.effect(
    "after one that stopped mid-undo, says it finished that rejection's compensation, and what it wrote",
    () => {
      const killed = { value: true }
      return Effect.gen(function* () {
        yield* Saga.run("payout-again", payout)
        const waiting = yield* Saga.status("payout-again")
        const stepId = waiting.steps.find((step) => step.state === "awaiting_approval")!.stepId
        const seen = { revision: waiting.revision, digest: waiting.digest }
        const reject = Authority.withPrincipal(
          Commands.reject({}, "payout-again", stepId, { ...seen, reason: "unknown payee" }),
          { id: "alice" }
        )
        const failed = yield* Effect.flip(reject)
        const stopped = yield* Saga.status("payout-again")
        expect(stopped.status).toBe("compensating")
        // A 503, and what the request journaled before the store failed: not "nothing was written".
        expect(failed).toMatchObject({
          _tag: "Unavailable",
          message: `the store could not be used (append); before that, this request journaled revisions ${waiting.revision + 1}–${stopped.revision} of saga payout-again (GET /api/sagas/payout-again shows where it stands)`
        })

        killed.value = false
        const again = yield* reject
        const after = yield* Saga.status("payout-again")
        expect(after.revision).toBeGreaterThan(stopped.revision)
        const wrote =
          after.revision === stopped.revision + 1
            ? `revision ${after.revision}`
            : `revisions ${stopped.revision + 1}–${after.revision}`
        expect(again).toMatchObject({ changed: true, revision: after.revision })
        // The undo the first reject ran has no outcome in the journal (unknown): the report is not clean.
        expect(again.message).toBe(
          `already rejected by alice: this call finished the compensation that rejection started (journaled ${wrote}); the saga's compensation failed`
        )
      }).pipe(Effect.provide(services(killed)))
    }
  )
})
