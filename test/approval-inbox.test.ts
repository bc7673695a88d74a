/**
 * The approval inbox (`Approval.inbox`, what `effect-saga approvals` and `GET /api/approvals`
 * list): the requests the store lists as pending, and those the journal waits on that the store
 * does not list — a saga imported from another journal, a row deleted, or a decision in the store
 * the journal lacks and a run would not act on. And an operator's command on such a decision.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, assert, describe, expect, it } from "@effect/vitest"
import Database from "better-sqlite3"
import { ConfigProvider, Effect, Layer, Schema } from "effect"
import { Approval, Compensable, Journal, Saga, SqlStore } from "../src/index.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-approval-inbox-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const fileFor = (name: string) => path.join(dir, `${name}-${Math.random().toString(36).slice(2)}.db`)
const onFile = (filename: string) => Saga.layer.pipe(Layer.provideMerge(SqlStore.layerSqlite({ filename })))
const key = `k1:${Buffer.alloc(32, 7).toString("base64")}`
const withKey = Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["EFFECT_SAGA_JOURNAL_KEYS", key]])))

const wire = Compensable.make({
  name: "wire",
  input: Schema.Struct({ amount: Schema.Int }),
  success: Schema.String,
  reversibility: "irreversible",
  execute: ({ amount }) => Effect.succeed(`wire-${amount}`)
})

/** Runs saga `sagaId` to its approval on `file`, and answers the request it made. */
const awaiting = (file: string, sagaId: string) =>
  Effect.gen(function* () {
    const result = yield* Saga.run(sagaId, wire({ amount: 42 }))
    assert(result._tag === "AwaitingApproval")
    return result.request
  }).pipe(Effect.provide(onFile(file)))

/** The inbox of `file`, read as the CLI and the HTTP API read it. */
const inboxOf = (file: string) =>
  Effect.gen(function* () {
    const journal = yield* Journal.Journal
    const sagas = yield* journal.list({ status: ["awaiting_approval"] })
    return yield* Approval.inbox(yield* Effect.forEach(sagas, (saga) => journal.read(saga.sagaId)))
  }).pipe(Effect.provide(onFile(file)))

const edit = (file: string, statement: string, ...args: ReadonlyArray<unknown>) => {
  const db = new Database(file, { fileMustExist: true })
  try {
    db.prepare(statement).run(...args)
  } finally {
    db.close()
  }
}

/** Makes the store's row of `requestId` say it was approved by mallory, status and decision agreeing. */
const forge = (file: string, request: Approval.ApprovalRequest) =>
  edit(
    file,
    "UPDATE effect_saga_approvals SET status = 'approved', decided_at = ?, decision = ? WHERE request_id = ?",
    request.requestedAt,
    JSON.stringify({ _tag: "Approved", by: "mallory", at: request.requestedAt, inputDigest: request.inputDigest }),
    request.requestId
  )

describe("Approval.inbox", () => {
  it.effect("lists a saga imported from another journal, which the store never held, and deciding it works", () =>
    Effect.gen(function* () {
      const from = fileFor("from")
      const to = fileFor("to")
      const request = yield* awaiting(from, "payout-1")
      const entries = yield* Effect.flatMap(Journal.Journal, (journal) => journal.read("payout-1")).pipe(
        Effect.provide(onFile(from))
      )
      yield* Effect.flatMap(Journal.Journal, (journal) => journal.importSaga(entries)).pipe(Effect.provide(onFile(to)))

      expect(yield* Approval.pending.pipe(Effect.provide(onFile(to)))).toEqual([])
      expect(yield* inboxOf(to)).toEqual([request])

      yield* Saga.approve("payout-1", request.stepId, { by: "alice" }).pipe(Effect.provide(onFile(to)))
      expect(yield* inboxOf(to)).toEqual([])
      const resumed = yield* Saga.run("payout-1", wire({ amount: 42 })).pipe(Effect.provide(onFile(to)))
      expect(resumed._tag).toBe("Completed")
    })
  )

  it.effect("lists a request whose row was deleted, as the journal made it", () =>
    Effect.gen(function* () {
      const file = fileFor("deleted")
      const request = yield* awaiting(file, "payout-1")
      edit(file, "DELETE FROM effect_saga_approvals")
      expect(yield* inboxOf(file)).toEqual([request])
    })
  )

  it.effect("lists a decision the journal lacks and no key signs, marked", () =>
    Effect.gen(function* () {
      const file = fileFor("forged")
      const request = yield* awaiting(file, "payout-1")
      forge(file, request)

      const [listed] = yield* inboxOf(file)
      expect(listed).toMatchObject({ requestId: request.requestId, inputDigest: request.inputDigest })
      expect(listed?.tampered).toContain("was approved by mallory, but the journal holds no such decision")
      expect(Approval.journaledRequest(listed!, [])).toMatchObject({ problem: { problem: "approval" } })

      // The operator's approve answers as approvals.md says: the store holds a decision.
      const approved = yield* Effect.flip(
        Saga.approve("payout-1", request.stepId, { by: "alice" }).pipe(Effect.provide(onFile(file)))
      )
      expect(approved).toMatchObject({ _tag: "AlreadyDecided", decision: "approved" })
    })
  )

  it.effect("with a journal key, a decision it signs is not listed: the next run acts on it", () =>
    Effect.gen(function* () {
      const file = fileFor("signed")
      const request = yield* awaiting(file, "payout-1")
      yield* Approval.approve(request.requestId, { by: "alice", inputDigest: request.inputDigest }).pipe(
        Effect.provide(onFile(file))
      )
      expect(yield* inboxOf(file)).toEqual([])
      forge(file, request)
      const [forged] = yield* inboxOf(file)
      expect(forged?.tampered).toContain("carries no MAC under the journal key")
    }).pipe(withKey)
  )
})

describe("Approval.journaledRequest of a request the journal already answered", () => {
  it.effect("a pending row restored over an approved step is marked at the decision's seq", () =>
    Effect.gen(function* () {
      const file = fileFor("restored")
      const request = yield* awaiting(file, "payout-1")
      yield* Saga.approve("payout-1", request.stepId, { by: "alice" }).pipe(Effect.provide(onFile(file)))
      edit(
        file,
        "UPDATE effect_saga_approvals SET status = 'pending', decided_at = NULL, decision = ?",
        '{"_tag":"Pending"}'
      )

      const [pending] = yield* Approval.pending.pipe(Effect.provide(onFile(file)))
      const entries = yield* Effect.flatMap(Journal.Journal, (journal) => journal.read("payout-1")).pipe(
        Effect.provide(onFile(file))
      )
      const approvedAt = entries.find((entry) => entry.phase === "APPROVED")!.seq
      const journaled = Approval.journaledRequest(pending!, entries)
      expect(journaled.problem).toMatchObject({ seq: approvedAt, problem: "approval" })
      expect(journaled.problem?.reason).toContain(`the journal answered it at seq ${approvedAt} (APPROVED)`)
    })
  )
})
