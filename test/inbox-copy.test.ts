/**
 * `Approval.inbox` against the approvals table's copy of each request: a pending copy whose input,
 * digest, tool or time is not the journal's, or a pending row no `AWAITING_APPROVAL` backs, is
 * listed marked `tampered`, with the reason the CLI's `approvals` and `GET /api/approvals` give
 * (`Approval.journaledRequest`), on every store, with and without a journal key; a run's own
 * request is never marked.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, assert, describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer } from "effect"
import { Approval, Journal, Saga, SqlStore } from "../src/index.js"
import { edit } from "./fixtures/sqlite-raw.js"
import { storesWherePossible } from "./fixtures/three-stores.js"
import { wire } from "./fixtures/wire.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-inbox-copy-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))
const fileOf = () => path.join(dir, `${Math.random().toString(36).slice(2)}.db`)

const stores = await storesWherePossible("effect-saga-inbox-copy")

const key = `k1:${Buffer.alloc(32, 7).toString("base64")}`
const keyings: ReadonlyArray<readonly [string, Map<string, string>]> = [
  ["without a journal key", new Map()],
  ["with EFFECT_SAGA_JOURNAL_KEYS", new Map([["EFFECT_SAGA_JOURNAL_KEYS", key]])]
]

/** A saga id of its own for each test: the PostgreSQL database is shared by the file. */
const sagaIdOf = (name: string) => `${name}-${Math.random().toString(36).slice(2, 10)}`

/** Runs `sagaId` to its approval: the request it made, and the seq of its `AWAITING_APPROVAL`. */
const awaiting = (sagaId: string) =>
  Effect.gen(function* () {
    const result = yield* Saga.run(sagaId, wire({ amount: 42 }))
    assert(result._tag === "AwaitingApproval")
    const entries = yield* Effect.flatMap(Journal.Journal, (journal) => journal.read(sagaId))
    const asked = entries.find((entry) => entry.phase === "AWAITING_APPROVAL")!
    return { request: result.request, seq: asked.seq }
  })

/** Replaces the store's record of a request with `copy`, pending: the approvals table edited, on any store. */
const replaceCopy = (copy: Approval.ApprovalRequest) =>
  Effect.flatMap(Approval.Approval, (approval) => approval.request(copy, { fresh: true }))

const edited = (seq: number, what = "the input") =>
  `the approvals table's copy of ${what} is not the one the journal holds at seq ${seq} (shown): the table was edited`
const neverMade = "the approvals table holds a request its saga's journal never made"

/** The inbox's requests of `sagaIds` (the PostgreSQL database holds the other tests' sagas too). */
const inboxOf = (...sagaIds: ReadonlyArray<string>) =>
  Effect.map(Approval.inbox, (requests) => requests.filter((request) => sagaIds.includes(request.sagaId)))

/** What the CLI and HTTP API say of `listed`: the journal's input and the mark they print. */
const readersSay = (listed: Approval.PendingRequest) =>
  Effect.map(
    Effect.flatMap(Journal.Journal, (journal) => journal.read(listed.sagaId)),
    (entries) => Approval.journaledRequest(listed, entries)
  )

for (const [name, store] of stores) {
  for (const [keying, config] of keyings) {
    const provided = <A, E>(effect: Effect.Effect<A, E, Saga.Saga | Journal.Journal | Approval.Approval>) =>
      effect.pipe(
        Effect.provide(Saga.layer.pipe(Layer.provideMerge(store()))),
        Effect.withConfigProvider(ConfigProvider.fromMap(config))
      )

    describe(`Approval.inbox marks a copy the journal does not back: ${name}, ${keying}`, () => {
      it.effect("a pending copy whose input was edited: marked, listed with the journal's input", () =>
        provided(
          Effect.gen(function* () {
            const sagaId = sagaIdOf("input")
            const { request, seq } = yield* awaiting(sagaId)
            yield* replaceCopy({ ...request, input: '{"amount":999999}' })

            const listed = yield* inboxOf(sagaId)
            expect(listed).toEqual([{ ...request, tampered: edited(seq) }])
            expect((yield* readersSay(listed[0]!)).problem).toEqual({ seq, problem: "approval", reason: edited(seq) })
          })
        )
      )

      it.effect("a pending copy whose digest was edited: marked, listed with the journal's digest", () =>
        provided(
          Effect.gen(function* () {
            const sagaId = sagaIdOf("digest")
            const { request, seq } = yield* awaiting(sagaId)
            yield* replaceCopy({ ...request, inputDigest: "0".repeat(64) })

            const digestEdited = edited(seq, "the input's digest")
            expect(yield* inboxOf(sagaId)).toEqual([{ ...request, tampered: digestEdited }])
            const page = yield* Approval.inboxPage({ offset: 0, limit: 1000 })
            const listed = page.requests.filter((pending) => pending.sagaId === sagaId)
            expect(listed).toEqual([{ ...request, tampered: digestEdited }])
          })
        )
      )

      it.effect("a pending row for a saga whose journal never asked (completed, or absent): marked", () =>
        provided(
          Effect.gen(function* () {
            const done = sagaIdOf("done")
            const absent = sagaIdOf("absent")
            const result = yield* Saga.run(done, Effect.succeed("done"))
            expect(result._tag).toBe("Completed")
            const forged = (sagaId: string, requestedAt: string): Approval.ApprovalRequest => ({
              requestId: `${sagaId}/wire-1`,
              sagaId,
              stepId: "wire-1",
              toolName: "wire",
              input: '{"amount":999999}',
              inputDigest: "0".repeat(64),
              requestedAt
            })
            const ofDone = forged(done, "2000-01-01T00:00:00.000Z")
            const ofAbsent = forged(absent, "2000-01-02T00:00:00.000Z")
            yield* replaceCopy(ofDone)
            yield* replaceCopy(ofAbsent)

            const listed = yield* inboxOf(done, absent)
            expect(listed).toEqual([
              { ...ofDone, tampered: neverMade },
              { ...ofAbsent, tampered: neverMade }
            ])
            expect((yield* readersSay(listed[0]!)).problem).toEqual({
              seq: null,
              problem: "approval",
              reason: neverMade
            })
          })
        )
      )

      it.effect(
        "a copy requested at another time while the saga's lease is held (a run replacing an earlier saga's record) is listed as the journal made it; once no one holds it, marked",
        () =>
          provided(
            Effect.gen(function* () {
              const sagaId = sagaIdOf("earlier")
              const { request, seq } = yield* awaiting(sagaId)
              const earlier = { ...request, requestedAt: "2000-01-01T00:00:00.000Z" }
              yield* replaceCopy(earlier)
              // As a run leaves it between journaling its AWAITING_APPROVAL and registering the request.
              const journal = yield* Journal.Journal
              yield* journal.claim(sagaId, { owner: "worker-2", ttlMillis: 30_000 })

              expect(yield* inboxOf(sagaId)).toEqual([request])

              yield* journal.release("worker-2", sagaId)
              const [marked] = yield* inboxOf(sagaId)
              expect(marked).toMatchObject({ ...earlier, input: request.input, inputDigest: request.inputDigest })
              expect(marked?.tampered).toBe(
                `the approvals table's copy of the request names another tool or time than the journal holds at seq ${seq} (tool wire, requested ${request.requestedAt}): the table was edited`
              )
            })
          )
      )

      it.effect("a run's own request, asked again by the saga's next run, is listed unmarked", () =>
        provided(
          Effect.gen(function* () {
            const sagaId = sagaIdOf("own")
            const { request } = yield* awaiting(sagaId)
            expect(yield* inboxOf(sagaId)).toEqual([request])
            // The next run asks again with the journal's request: still the same, unmarked.
            const again = yield* Saga.run(sagaId, wire({ amount: 42 }))
            expect(again._tag).toBe("AwaitingApproval")
            expect(yield* inboxOf(sagaId)).toEqual([request])
          })
        )
      )
    })
  }
}

describe("Approval.inbox over an SQLite file edited behind the library's back", () => {
  const onFile = (filename: string) => Saga.layer.pipe(Layer.provideMerge(SqlStore.layerSqlite({ filename })))

  it.effect("UPDATE of input, of input_digest, and an INSERT for a completed saga are each marked", () =>
    Effect.gen(function* () {
      const file = fileOf()
      const { request, seq } = yield* awaiting("payout-1").pipe(Effect.provide(onFile(file)))
      const inbox = Approval.inbox.pipe(Effect.provide(onFile(file)))

      edit(file, `UPDATE effect_saga_approvals SET input = '{"amount":999999}'`)
      expect(yield* inbox).toEqual([{ ...request, tampered: edited(seq) }])

      edit(file, "UPDATE effect_saga_approvals SET input = ?, input_digest = ?", request.input, "f".repeat(64))
      expect(yield* inbox).toEqual([{ ...request, tampered: edited(seq, "the input's digest") }])

      edit(file, "DELETE FROM effect_saga_approvals")
      yield* Saga.run("done", Effect.void).pipe(Effect.provide(onFile(file)))
      edit(
        file,
        `INSERT INTO effect_saga_approvals (request_id, position, saga_id, step_id, tool_name, input, input_digest,
  requested_at, status, decision, registered_at, decided_at)
VALUES ('done/wire-1', 99, 'done', 'wire-1', 'wire', '{"amount":999999}', ?, '2000-01-01T00:00:00.000Z', 'pending',
  '{"_tag":"Pending"}', '2000-01-01T00:00:00.000Z', NULL)`,
        "0".repeat(64)
      )
      const listed = yield* inbox
      expect(listed.map((pending) => [pending.requestId, pending.tampered])).toEqual([
        // Its row deleted: the journal's request, as it made it (requested at the test clock's start).
        [request.requestId, undefined],
        ["done/wire-1", neverMade]
      ])
    })
  )
})
