/**
 * `Approval.inboxPage` (what `GET /api/approvals`, the console's inbox and `effect-saga approvals
 * --limit` list): the sagas with something waiting, selected by the store, a page of them judged as
 * `Approval.inbox` judges them; on every store, and a page reads only its own sagas' journals.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, TestClock } from "effect"
import { Approval, Journal, Saga } from "../src/index.js"
import * as Reading from "../src/internal/http/reading.js"
import { sendWireTransfer } from "./fixtures/cli-tools.js"
import { journalCountingReads } from "./fixtures/counting-reads.js"
import { storesWherePossible } from "./fixtures/three-stores.js"

const stores = await storesWherePossible("effect-saga-inbox-page")

const waiting = ["w-1", "w-2", "w-3", "w-4", "w-5"]

/** Five sagas awaiting approval of a wire transfer, one a second, and one that completed between them. */
const seed = Effect.forEach(
  [...waiting.slice(0, 2), "done", ...waiting.slice(2)],
  (sagaId) =>
    Effect.zipRight(
      TestClock.adjust("1 second"),
      Saga.run(sagaId, sagaId === "done" ? Effect.void : sendWireTransfer({ amount: 1, to: sagaId }))
    ),
  { discard: true }
)

const ids = (page: Approval.InboxPage) => page.requests.map((request) => request.sagaId)

for (const [name, store] of stores) {
  describe(`Approval.inboxPage: ${name}`, () => {
    it.effect("pages the sagas with something waiting, oldest first, as the whole inbox lists them", () =>
      Effect.gen(function* () {
        yield* seed
        const inbox = yield* Approval.inbox
        expect(inbox.map((request) => request.sagaId)).toEqual(waiting)
        const all = yield* Approval.inboxPage({ offset: 0, limit: 50 })
        expect(all).toEqual({ requests: inbox, sagas: 5 })
        expect(ids(yield* Approval.inboxPage({ offset: 1, limit: 2 }))).toEqual(["w-2", "w-3"])
        const pages = yield* Effect.forEach([0, 2, 4], (offset) => Approval.inboxPage({ offset, limit: 2 }))
        expect(pages.flatMap((page) => page.requests)).toEqual(inbox)
        expect(pages.map((page) => page.sagas)).toEqual([5, 5, 5])
        expect(yield* Approval.inboxPage({ offset: 10, limit: 2 })).toEqual({ requests: [], sagas: 5 })
      }).pipe(Effect.provide(Saga.layer.pipe(Layer.provideMerge(store()))))
    )

    it.effect(
      "an offset or limit that names no page is a JournalError saying which (not a slice counted from the end)",
      () =>
        Effect.gen(function* () {
          yield* seed
          const refused = [
            [{ offset: -1, limit: 50 }, "offset must be a whole number of 0 or more, not -1"],
            [{ offset: Number.NaN, limit: 50 }, "offset must be a whole number of 0 or more, not NaN"],
            [{ offset: 1.5, limit: 2 }, "offset must be a whole number of 0 or more, not 1.5"],
            [{ offset: 0, limit: -1 }, "limit must be a whole number of 1 or more, not -1"],
            [{ offset: 0, limit: 0 }, "limit must be a whole number of 1 or more, not 0"],
            [{ offset: 0, limit: Number.POSITIVE_INFINITY }, "limit must be a whole number of 1 or more, not Infinity"]
          ] as const
          for (const [query, reason] of refused) {
            const error = yield* Effect.flip(Approval.inboxPage(query))
            expect(error).toBeInstanceOf(Journal.JournalError)
            expect(error).toMatchObject({ operation: "inbox", reason })
          }
          // The whole inbox is still every saga's.
          expect((yield* Approval.inbox).map((request) => request.sagaId)).toEqual(waiting)
        }).pipe(Effect.provide(Saga.layer.pipe(Layer.provideMerge(store()))))
    )

    it.effect("a saga decided leaves the pages; the count follows", () =>
      Effect.gen(function* () {
        yield* seed
        const [first] = (yield* Approval.inboxPage({ offset: 0, limit: 1 })).requests
        yield* Saga.reject(first!.sagaId, first!.stepId, { by: "alice", reason: "no" })
        const page = yield* Approval.inboxPage({ offset: 0, limit: 2 })
        expect(ids(page)).toEqual(["w-2", "w-3"])
        expect(page.sagas).toBe(4)
      }).pipe(Effect.provide(Saga.layer.pipe(Layer.provideMerge(store()))))
    )
  })
}

/** A memory journal that counts the sagas whose entries are read. */
const counting = (reads: Set<string>) => journalCountingReads((sagaId) => reads.add(sagaId))

describe("a page of the inbox reads only its own sagas' journals", () => {
  it.effect("Approval.inboxPage: two of five waiting read two journals", () => {
    const reads = new Set<string>()
    return Effect.gen(function* () {
      yield* seed
      reads.clear()
      const page = yield* Approval.inboxPage({ offset: 2, limit: 2 })
      expect(ids(page)).toEqual(["w-3", "w-4"])
      expect([...reads].sort()).toEqual(["w-3", "w-4"])
    }).pipe(Effect.provide(Saga.layer.pipe(Layer.provideMerge(Layer.merge(counting(reads), Approval.layerMemory)))))
  })

  it.effect("GET /api/approvals: the page's sagas only, and how many wait in all", () => {
    const reads = new Set<string>()
    return Effect.gen(function* () {
      yield* seed
      reads.clear()
      const page = yield* Reading.pendingApprovalsPage({ limit: 2 })
      expect(page.approvals.map((request) => request.sagaId)).toEqual(["w-1", "w-2"])
      expect(page).toMatchObject({ sagas: 5, offset: 0, limit: 2 })
      expect([...reads].sort()).toEqual(["w-1", "w-2"])
    }).pipe(Effect.provide(Saga.layer.pipe(Layer.provideMerge(Layer.merge(counting(reads), Approval.layerMemory)))))
  })
})
