/**
 * `Saga.approve` and `Saga.reject` write the approval store, then the journal. A command that
 * stopped between the two (a crash, a journal write that failed) left a decision the journal lacks:
 * the same command again finishes it, on every store; another decision is still `AlreadyDecided`.
 * The half-written state is made here as the first write makes it: through the store's own service.
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { assert, describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer } from "effect"
import { Approval, type Journal, Saga, SqlStore } from "../src/index.js"
import { entriesOf } from "./fixtures/journal-reads.js"
import { reserveAndWire } from "./fixtures/reserve-wire.js"
import { edit } from "./fixtures/sqlite-raw.js"
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
          // Not stated as a fact first: the store's word, whose the decision is, and whether a run acts on it.
          expect(other.message).toMatch(
            new RegExp(
              `^approval request approve-half/${stepId} holds a decision already: the approval store says step ${stepId} was approved by alice`
            )
          )
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

describe("a decision the store holds that no command made (SQLite, its table edited)", () => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "effect-saga-half-forged-"))
  const key = `k1:${Buffer.alloc(32, 7).toString("base64")}`
  const onFile = (filename: string) =>
    Effect.provide(Saga.layer.pipe(Layer.provideMerge(SqlStore.layerSqlite({ filename }))))
  const withKey = Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["EFFECT_SAGA_JOURNAL_KEYS", key]])))
  /** The wire approved by `by` at `at` in the approvals table alone, as an edit of it writes it. */
  const forged = (filename: string, requestId: string, inputDigest: string, by: string, at: string) =>
    edit(
      filename,
      "UPDATE effect_saga_approvals SET status = 'approved', decision = ?, decided_at = ? WHERE request_id = ?",
      JSON.stringify({ _tag: "Approved", by, at, inputDigest }),
      at,
      requestId
    )

  it.effect.each([
    ["dated after now, no journal key", "2099-01-01T00:00:00.000Z", false, "which is not between the request"],
    ["dated before the request, no journal key", "1960-01-01T00:00:00.000Z", false, "which is not between the request"],
    [
      "dated in a form no command writes, no journal key",
      "1970-01-01T01:00:00.000+01:00",
      false,
      "which is no time a command writes"
    ],
    ["unsigned under a journal key", "1970-01-01T00:00:00.000Z", true, "carries no MAC under the journal key"]
  ] as const)(
    "%s: the same approve again is refused as tampering, nothing journaled, and another approver is told whose it is",
    ([, at, keyed, said]) =>
      Effect.gen(function* () {
        const filename = Path.join(dir, `${Math.random()}.db`)
        const sagaId = "forged-decision"
        const outcome = yield* Effect.gen(function* () {
          const world = reserveAndWire()
          const waiting = yield* Saga.run(sagaId, world.program)
          assert(waiting._tag === "AwaitingApproval")
          forged(filename, waiting.request.requestId, waiting.request.inputDigest, "alice", at)
          const before = (yield* entriesOf(sagaId)).length
          const same = yield* Effect.flip(Saga.approve(sagaId, waiting.request.stepId, { by: "alice" }))
          expect(same).toMatchObject({ _tag: "JournalTampered", problem: "approval" })
          expect(same.message).toContain(said)
          const other = yield* Effect.flip(Saga.approve(sagaId, waiting.request.stepId, { by: "bob" }))
          expect(other._tag).toBe("AlreadyDecided")
          expect(other.message).toContain(
            `the approval store says step ${waiting.request.stepId} was approved by alice`
          )
          expect((yield* entriesOf(sagaId)).length).toBe(before)
          return world.calls
        }).pipe(onFile(filename), keyed ? withKey : (effect) => effect)
        expect(outcome.wire).toBe(0)
      })
  )
})
