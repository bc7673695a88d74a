/**
 * A saga id used again after its saga was pruned: the approvals of the pruned saga stay in the
 * store (a record of who decided what), and none of them may answer the new saga's request. The
 * clock stands still (`TestClock`), so both sagas ask at the same instant: only the run that
 * journals the request knows it is new.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, assert, describe, expect, it } from "@effect/vitest"
import Database from "better-sqlite3"
import { ConfigProvider, Effect, Layer, Schema, TestClock } from "effect"
import { Approval, Compensable, Journal, Saga, SqlStore } from "../src/index.js"
import * as Testing from "../src/Testing.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-approval-reuse-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const key = `k1:${Buffer.alloc(32, 7).toString("base64")}`
const withKey = Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["EFFECT_SAGA_JOURNAL_KEYS", key]])))
const fileFor = (name: string) => path.join(dir, `${name}-${Math.random().toString(36).slice(2)}.db`)

const world = () => {
  const wired: Array<number> = []
  const wire = Compensable.make({
    name: "wire",
    input: Schema.Struct({ amount: Schema.Int, to: Schema.String }),
    success: Schema.String,
    reversibility: "irreversible",
    execute: ({ amount }) => Effect.sync(() => `wire-${wired.push(amount)}`)
  })
  return { wired, payout: wire({ amount: 4200, to: "DE89" }) }
}

type Decide = (
  sagaId: string,
  request: Approval.ApprovalRequest
) => Effect.Effect<unknown, unknown, Saga.Saga | Approval.Approval>

const throughSaga: Decide = (sagaId, request) => Saga.approve(sagaId, request.stepId, { by: "alice" })
const throughService: Decide = (_, request) =>
  Approval.approve(request.requestId, { by: "alice", inputDigest: request.inputDigest })

/** Runs `payout-1` to its end through an approval, prunes it, and runs the same id again. */
const reuseAfterPrune = (decide: Decide) =>
  Effect.gen(function* () {
    const { payout, wired } = world()
    const first = yield* Saga.run("payout-1", payout)
    assert(first._tag === "AwaitingApproval")
    yield* decide("payout-1", first.request)
    expect((yield* Saga.run("payout-1", payout))._tag).toBe("Completed")
    const journal = yield* Journal.Journal
    expect(yield* journal.prune("2100-01-01")).toEqual(["payout-1"])

    const again = yield* Saga.run("payout-1", payout)
    assert(again._tag === "AwaitingApproval", `the new saga ran on the pruned saga's approval: ${again._tag}`)
    expect(again.request.requestedAt).toBe(first.request.requestedAt)
    expect(wired).toEqual([4200])
    expect((yield* Approval.pending).map((request) => request.requestId)).toEqual([again.request.requestId])
    // Its own approval runs it, once.
    yield* decide("payout-1", again.request)
    expect((yield* Saga.run("payout-1", payout))._tag).toBe("Completed")
    expect(wired).toEqual([4200, 4200])
  })

const onFile = (filename: string) => Saga.layer.pipe(Layer.provideMerge(SqlStore.layerSqlite({ filename })))
const sqlite = (name: string) => onFile(fileFor(name))

describe("a saga id used again after a prune asks for its own approval", () => {
  it.effect("in memory, decided through Saga.approve", () =>
    reuseAfterPrune(throughSaga).pipe(Effect.provide(Testing.layer))
  )
  it.effect("in memory, decided through the Approval service", () =>
    reuseAfterPrune(throughService).pipe(Effect.provide(Testing.layer))
  )
  it.effect("on SQLite without a journal key, decided through Saga.approve", () =>
    reuseAfterPrune(throughSaga).pipe(Effect.provide(sqlite("nokey")))
  )
  it.effect("on SQLite with a journal key, decided through the Approval service", () =>
    reuseAfterPrune(throughService).pipe(Effect.provide(sqlite("key")), withKey)
  )
})

describe("a signed decision names the time its request was made", () => {
  it.effect("copied from a pruned saga into the new saga's request, it does not verify", () => {
    const filename = fileFor("copied")
    return Effect.gen(function* () {
      const { payout, wired } = world()
      const first = yield* Saga.run("payout-1", payout)
      assert(first._tag === "AwaitingApproval")
      yield* throughService("payout-1", first.request)
      const db = new Database(filename)
      const signed = db
        .prepare("SELECT decision FROM effect_saga_approvals WHERE request_id = ?")
        .pluck()
        .get(first.request.requestId)
      expect((yield* Saga.run("payout-1", payout))._tag).toBe("Completed")
      yield* (yield* Journal.Journal).prune("2100-01-01")

      yield* TestClock.adjust("1 hour")
      const again = yield* Saga.run("payout-1", payout)
      assert(again._tag === "AwaitingApproval")
      // Someone with write access to the database, but not the key, puts the old decision back.
      db.prepare("UPDATE effect_saga_approvals SET status = 'approved', decision = ? WHERE request_id = ?").run(
        signed,
        again.request.requestId
      )
      db.close()
      const replayed = yield* Effect.flip(Saga.run("payout-1", payout))
      expect(replayed).toMatchObject({ _tag: "JournalTampered", problem: "approval" })
      expect(replayed.message).toContain("its MAC does not verify")
      expect(wired).toEqual([4200])
    }).pipe(Effect.provide(onFile(filename)), withKey)
  })
})
