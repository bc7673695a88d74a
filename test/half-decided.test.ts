/**
 * `Saga.approve` and `Saga.reject` write the approval store, then the journal. A command that
 * stopped between the two (a crash, a journal write that failed) left a decision the journal lacks:
 * the same command again finishes it, on every store; another decision is still `AlreadyDecided`.
 * The half-written state is made here as the first write makes it: through the store's own service.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Approval, type Journal, Saga } from "../src/index.js"
import { entriesOf } from "./fixtures/journal-reads.js"
import { reserveAndWire } from "./fixtures/reserve-wire.js"
import { threeStores } from "./fixtures/three-stores.js"

const stores = await threeStores("effect-saga-half-decided")

/** A saga awaiting approval of its wire, with the store's decision written and the journal's not. */
const halfDecided = (
  sagaId: string,
  decide: (requestId: string, inputDigest: string) => Effect.Effect<void, unknown, Approval.Approval>
) =>
  Effect.gen(function* () {
    const world = reserveAndWire()
    const waiting = yield* Saga.run(sagaId, world.program)
    assert(waiting._tag === "AwaitingApproval")
    yield* Effect.orDie(decide(waiting.request.requestId, waiting.request.inputDigest))
    return { ...world, stepId: waiting.request.stepId }
  })

for (const [name, store] of stores) {
  describe(`a decision the store holds and the journal lacks: ${name}`, () => {
    const provided = <A, E>(effect: Effect.Effect<A, E, Saga.Saga | Approval.Approval | Journal.Journal>) =>
      effect.pipe(Effect.provide(Saga.layer.pipe(Layer.provideMerge(store()))))

    it.effect("the same approve again journals it (at the store's time), and the next run runs the step once", () =>
      provided(
        Effect.gen(function* () {
          const { calls, program, stepId } = yield* halfDecided("approve-half", (requestId, inputDigest) =>
            Approval.approve(requestId, { by: "alice", inputDigest, expiresAt: "2999-01-01T00:00:00Z" })
          )
          const other = yield* Effect.flip(Saga.approve("approve-half", stepId, { by: "bob" }))
          expect(other).toMatchObject({ _tag: "AlreadyDecided", decision: "approved" })
          const noExpiry = yield* Effect.flip(Saga.approve("approve-half", stepId, { by: "alice" }))
          expect(noExpiry._tag).toBe("AlreadyDecided")
          expect((yield* entriesOf("approve-half")).map((entry) => entry.phase)).not.toContain("APPROVED")

          yield* Saga.approve("approve-half", stepId, { by: "alice", expiresAt: "2999-01-01T00:00:00Z" })
          const approved = (yield* entriesOf("approve-half")).at(-1)!
          expect(approved.phase).toBe("APPROVED")
          const stored = yield* Approval.Approval.pipe(
            Effect.flatMap((service) => service.get(`approve-half/${stepId}`))
          )
          assert(stored._tag === "Some" && stored.value.decision._tag === "Approved")
          expect(JSON.parse(approved.payload!)).toMatchObject({ by: "alice", at: stored.value.decision.at })

          expect((yield* Saga.run("approve-half", program))._tag).toBe("Completed")
          expect(calls.wire).toBe(1)
        })
      )
    )

    it.effect("the same reject again journals it and compensates; another reason is AlreadyDecided", () =>
      provided(
        Effect.gen(function* () {
          const { calls, program, stepId } = yield* halfDecided("reject-half", (requestId) =>
            Approval.reject(requestId, { by: "carol", reason: "wrong IBAN" })
          )
          const other = yield* Effect.flip(Saga.reject("reject-half", stepId, { by: "carol", reason: "other" }))
          expect(other).toMatchObject({ _tag: "AlreadyDecided", decision: "rejected" })
          const approve = yield* Effect.flip(Saga.approve("reject-half", stepId, { by: "carol" }))
          expect(approve._tag).toBe("AlreadyDecided")

          const report = yield* Saga.reject("reject-half", stepId, { by: "carol", reason: "wrong IBAN" })
          expect(report.status).toBe("compensated")
          const phases = (yield* entriesOf("reject-half")).map((entry) => entry.phase)
          expect(phases.filter((phase) => phase === "REJECTED")).toHaveLength(1)
          expect((yield* Saga.run("reject-half", program))._tag).toBe("Compensated")
          expect(calls).toEqual({ reserve: 1, release: 1, wire: 0 })
        })
      )
    )
  })
}
