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
import { ConfigProvider, Effect, Layer } from "effect"
import { Approval, Journal, Saga, SqlStore } from "../src/index.js"
import { edit } from "./fixtures/sqlite-raw.js"
import { wire } from "./fixtures/wire.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-approval-inbox-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const fileFor = (name: string) => path.join(dir, `${name}-${Math.random().toString(36).slice(2)}.db`)
const onFile = (filename: string) => Saga.layer.pipe(Layer.provideMerge(SqlStore.layerSqlite({ filename })))
const key = `k1:${Buffer.alloc(32, 7).toString("base64")}`
const withKey = Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["EFFECT_SAGA_JOURNAL_KEYS", key]])))

/** Runs saga `sagaId` to its approval on `file`, and answers the request it made. */
const awaiting = (file: string, sagaId: string) =>
  Effect.gen(function* () {
    const result = yield* Saga.run(sagaId, wire({ amount: 42 }))
    assert(result._tag === "AwaitingApproval")
    return result.request
  }).pipe(Effect.provide(onFile(file)))

/** The inbox of `file`. */
const inboxOf = (file: string) => Approval.inbox.pipe(Effect.provide(onFile(file)))

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
      // Read by a process without the key, the signed journal cannot be checked: its request is marked so.
      const [unchecked] = yield* Effect.withConfigProvider(inboxOf(file), ConfigProvider.fromMap(new Map()))
      expect(unchecked?.requestId).toBe(request.requestId)
      expect(unchecked?.tampered).toContain("carries a MAC under key k1, but this process has no journal key")
      forge(file, request)
      const [forged] = yield* inboxOf(file)
      expect(forged?.tampered).toContain("carries no MAC under the journal key")
    }).pipe(withKey)
  )
})

describe("Approval.inbox against what the journal answered", () => {
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

      const entries = yield* Effect.flatMap(Journal.Journal, (journal) => journal.read("payout-1")).pipe(
        Effect.provide(onFile(file))
      )
      const approvedAt = entries.find((entry) => entry.phase === "APPROVED")!.seq
      const [listed] = yield* inboxOf(file)
      expect(listed).toMatchObject({ requestId: request.requestId })
      expect(listed?.tampered).toContain(`the journal answered it at seq ${approvedAt} (APPROVED)`)
      expect(Approval.answeredRequest(entries, request.stepId)?.seq).toBe(approvedAt)
    })
  )

  it.effect(
    "a command that decides while the inbox reads (the store written, then the journal) is not taken for a forgery",
    () =>
      Effect.gen(function* () {
        const file = fileFor("race")
        const request = yield* awaiting(file, "payout-1")
        const layer = onFile(file)
        // The store's record is read after the journal: the decision lands in between, both writes of it.
        const racing = Layer.effect(
          Approval.Approval,
          Effect.gen(function* () {
            const store = yield* Approval.Approval
            const journal = yield* Journal.Journal
            let decided = false
            return {
              ...store,
              get: (requestId: string) =>
                Effect.gen(function* () {
                  if (!decided) yield* decide(requestId)
                  return yield* store.get(requestId)
                })
            }
            function decide(requestId: string) {
              decided = true
              return Effect.orDie(
                Effect.gen(function* () {
                  yield* store.approve(requestId, { by: "alice", inputDigest: request.inputDigest })
                  const row = yield* Effect.flatMap(journal.get("payout-1"), Effect.orDie)
                  const awaitingEntry = (yield* journal.read("payout-1")).find(
                    (entry) => entry.phase === "AWAITING_APPROVAL"
                  )!
                  yield* journal.append("payout-1", { revision: row.revision, digest: row.digest }, [
                    {
                      stepId: awaitingEntry.stepId,
                      toolName: awaitingEntry.toolName,
                      phase: "APPROVED",
                      input: null,
                      payload: JSON.stringify({
                        _tag: "Approved",
                        by: "alice",
                        at: row.updatedAt,
                        inputDigest: request.inputDigest
                      })
                    }
                  ])
                })
              )
            }
          })
        ).pipe(Layer.provideMerge(layer))
        expect(yield* Approval.inbox.pipe(Effect.provide(racing))).toEqual([])
      })
  )
})

describe("Approval.inbox while a command is between its two writes", () => {
  it.effect(
    "a decision the journal lacks while the saga's lease is held is listed unmarked; once no one holds it, marked",
    () =>
      Effect.gen(function* () {
        const file = fileFor("between")
        const request = yield* awaiting(file, "payout-1")
        // As Saga.approve leaves it between its writes: the lease taken, the store decided, the journal not yet.
        const onJournal = <A, E>(use: (journal: Journal.Journal["Type"]) => Effect.Effect<A, E>) =>
          Effect.flatMap(Journal.Journal, use).pipe(Effect.provide(onFile(file)))
        yield* onJournal((journal) => journal.claim("payout-1", { owner: "operator-cli", ttlMillis: 30_000 }))
        forge(file, request)

        const [listed] = yield* inboxOf(file)
        expect(listed).toMatchObject({ requestId: request.requestId, inputDigest: request.inputDigest })
        expect(listed?.tampered).toBeUndefined()

        // The command stopped there: its lease dropped, the decision is one no journal holds.
        yield* onJournal((journal) => journal.release("operator-cli", "payout-1"))
        const [marked] = yield* inboxOf(file)
        expect(marked?.tampered).toContain("was approved by mallory, but the journal holds no such decision")
      })
  )
})

describe("Approval.inbox on a journal that does not verify", () => {
  /** The break `Saga.status` names for `sagaId` on `file`, as the inbox words it. */
  const breakOf = (file: string, sagaId: string) =>
    Effect.map(Saga.status(sagaId).pipe(Effect.provide(onFile(file))), ({ tampered }) => {
      assert(tampered !== undefined)
      return `its saga's journal does not verify at seq ${tampered.seq} (${tampered.problem}): ${tampered.reason}`
    })

  it.effect(
    "an unsigned APPROVED appended under a journal key is no answer: the request is listed with the break",
    () =>
      Effect.gen(function* () {
        const file = fileFor("unsigned")
        const request = yield* awaiting(file, "payout-1")
        // Appended by a process without the key: chained and the row moved on, but not signed.
        yield* Effect.gen(function* () {
          const journal = yield* Journal.Journal
          const row = yield* Effect.flatMap(journal.get("payout-1"), Effect.orDie)
          yield* journal.append("payout-1", { revision: row.revision, digest: row.digest }, [
            {
              stepId: request.stepId,
              toolName: request.toolName,
              phase: "APPROVED",
              input: null,
              payload: JSON.stringify({
                _tag: "Approved",
                by: "mallory",
                at: row.updatedAt,
                inputDigest: request.inputDigest
              })
            }
          ])
        }).pipe(Effect.provide(onFile(file)), Effect.withConfigProvider(ConfigProvider.fromMap(new Map())))

        const mark = yield* breakOf(file, "payout-1")
        const listed = yield* inboxOf(file)
        expect(listed).toEqual([
          { ...request, tampered: `${mark}; what the journal says of the request is not evidence` }
        ])
        expect(listed[0]?.tampered).not.toContain("the table is behind the journal")
      }).pipe(withKey)
  )

  it.effect("an entry edited behind the library's back: the request is listed with the break, not as waiting", () =>
    Effect.gen(function* () {
      const file = fileFor("edited")
      const request = yield* awaiting(file, "payout-1")
      edit(
        file,
        "UPDATE effect_saga_entries SET at = ? WHERE saga_id = 'payout-1' AND seq = 1",
        "2000-01-01T00:00:00.000Z"
      )

      const mark = yield* breakOf(file, "payout-1")
      const [listed] = yield* inboxOf(file)
      expect(listed).toMatchObject({ requestId: request.requestId })
      expect(listed?.tampered).toBe(`${mark}; what the journal says of the request is not evidence`)
    })
  )

  it.effect("a saga row that no longer decodes marks that saga's requests and hides no other saga's", () =>
    Effect.gen(function* () {
      const file = fileFor("bad-row")
      const healthy = yield* awaiting(file, "payout-1")
      const edited = yield* awaiting(file, "payout-2")
      edit(file, "UPDATE effect_saga_sagas SET revision = 'five' WHERE saga_id = 'payout-2'")

      const listed = yield* inboxOf(file)
      expect(listed.map((request) => [request.requestId, request.tampered === undefined])).toEqual([
        [healthy.requestId, true],
        [edited.requestId, false]
      ])
      expect(listed[1]?.tampered).toContain("does not verify at seq 1 (row)")
    })
  )
})
