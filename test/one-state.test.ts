/**
 * A reader that reads a saga's row (with its steps, `Saga.status`) and its entries apart shows one
 * state: `GET /api/sagas/:sagaId` (its row, steps and entries) while an operator's approval lands
 * between the two reads.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { Approval, Compensable, Journal, Saga } from "../src/index.js"
import { getSaga } from "../src/internal/http/reading.js"
import { makeMemoryJournal } from "../src/internal/journal/memory.js"
import { asOf } from "../src/internal/util/asOf.js"

const wire = Compensable.make({
  name: "wire",
  input: Schema.Int,
  success: Schema.String,
  reversibility: "irreversible",
  execute: (amount) => Effect.succeed(`wire-${amount}`)
})

/** A memory journal whose `read` number `landAt` (once armed) first journals `APPROVED`, as an operator would. */
const landing = () => {
  const journal = makeMemoryJournal()
  const state = { reads: 0, landAt: 0, stepId: "" }
  const approve = (sagaId: string) =>
    Effect.orDie(
      Effect.gen(function* () {
        const row = yield* Effect.flatMap(journal.get(sagaId), Effect.orDie)
        const payload = { _tag: "Approved", by: "alice", at: row.updatedAt, inputDigest: "d" }
        yield* journal.append(sagaId, row, [
          { stepId: state.stepId, toolName: "wire", phase: "APPROVED", input: null, payload: JSON.stringify(payload) }
        ])
      })
    )
  const read: Journal.Journal["Type"]["read"] = (sagaId) =>
    Effect.suspend(() => {
      state.reads++
      return state.reads === state.landAt
        ? Effect.zipRight(approve(sagaId), journal.read(sagaId))
        : journal.read(sagaId)
    })
  const layer = Saga.layer.pipe(
    Layer.provideMerge(Layer.merge(Layer.succeed(Journal.Journal, { ...journal, read }), Approval.layerMemory))
  )
  return { layer, state }
}

describe("a saga read as one state", () => {
  it.effect("GET /api/sagas/:sagaId: an approval landing between the row and the entries is in neither", () =>
    Effect.gen(function* () {
      const { layer, state } = landing()
      yield* Effect.gen(function* () {
        const result = yield* Saga.run("payout-1", wire(42))
        assert(result._tag === "AwaitingApproval")
        state.stepId = result.request.stepId
        // The detail reads the row and steps first, then the entries: the approval lands on the last read.
        const reads = state.reads
        yield* getSaga("payout-1")
        state.landAt = state.reads + (state.reads - reads)
        const detail = yield* getSaga("payout-1")
        expect(state.reads).toBeGreaterThanOrEqual(state.landAt)
        expect(detail.saga.revision).toBe(detail.entries.at(-1)?.seq)
        expect(detail.entries.map((entry) => entry.phase)).not.toContain("APPROVED")
        expect(detail.steps.map((step) => step.state)).toEqual(["awaiting_approval"])
        // Read again, the approval is in all three.
        const after = yield* getSaga("payout-1")
        expect(after.saga.revision).toBe(after.entries.at(-1)?.seq)
        expect(after.entries.at(-1)?.phase).toBe("APPROVED")
        expect(after.steps.map((step) => step.state)).toEqual(["approved"])
      }).pipe(Effect.provide(layer))
    })
  )

  it("asOf cuts entries read after the row to its revision, and keeps those that stop at it", () => {
    const entry = (seq: number) => ({ seq }) as Journal.Entry
    const entries = [entry(1), entry(2), entry(3)]
    expect(asOf(entries, 3)).toBe(entries)
    expect(asOf(entries, 2).map((read) => read.seq)).toEqual([1, 2])
    expect(asOf([], 0)).toEqual([])
  })
})
