/**
 * With a journal key, whoever can write the database but does not hold the key can no longer forge
 * a step, a result or an approval: entries and approval decisions carry an HMAC under the key.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, assert, describe, expect, it } from "@effect/vitest"
import Database from "better-sqlite3"
import { ConfigProvider, Effect, Layer, Schema, TestClock } from "effect"
import { Approval, Compensable, Journal, Keys, Saga, SqlJournal, SqlStore } from "../src/index.js"
import { edit } from "./fixtures/sqlite-raw.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-journal-keys-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const k1 = `k1:${Buffer.alloc(32, 1).toString("base64")}`
const k2 = `k2:${Buffer.alloc(32, 2).toString("base64")}`

/** Runs `effect` on the SQLite file with `EFFECT_SAGA_JOURNAL_KEYS` set to `keys` (none when undefined). */
const onFile =
  (filename: string, keys: string | undefined) =>
  <A, E>(effect: Effect.Effect<A, E, Saga.Saga | Journal.Journal | Approval.Approval>) =>
    effect.pipe(
      Effect.provide(Saga.layer.pipe(Layer.provideMerge(SqlStore.layerSqlite({ filename })))),
      Effect.withConfigProvider(
        ConfigProvider.fromMap(new Map(keys === undefined ? [] : [["EFFECT_SAGA_JOURNAL_KEYS", keys]]))
      )
    )

const fileFor = (name: string) => path.join(dir, `${name}-${Math.random().toString(36).slice(2)}.db`)

const makeWorld = () => {
  const calls = { reserve: 0, wire: 0 }
  const reserve = Compensable.make({
    name: "reserve",
    input: Schema.String,
    success: Schema.String,
    execute: (sku) => Effect.sync(() => `res-${sku}-${++calls.reserve}`),
    compensate: () => Effect.void
  })
  const wire = Compensable.make({
    name: "wire",
    input: Schema.Struct({ amount: Schema.Int, to: Schema.String }),
    success: Schema.String,
    reversibility: "irreversible",
    execute: ({ amount }) => Effect.sync(() => `wire-${amount}-${++calls.wire}`)
  })
  const program = Effect.gen(function* () {
    const reservation = yield* reserve("A-1")
    const transfer = yield* wire({ amount: 5000, to: "DE89" })
    return { reservation, transfer }
  })
  return { calls, program, reserve }
}

/** Rewrites every entry's hash and the row's digest with plain SHA-256, as someone without the key would. */
const rechain = (filename: string, sagaId: string) => {
  const db = new Database(filename)
  const rows = db
    .prepare(
      `SELECT saga_id AS sagaId, seq, step_id AS stepId, tool_name AS toolName, phase, input, payload, at, hash
FROM effect_saga_entries WHERE saga_id = ? ORDER BY seq`
    )
    .all(sagaId) as Array<Journal.Entry>
  let previous = "0".repeat(64)
  for (const row of rows) {
    previous = Journal.hashEntry(previous, row)
    db.prepare("UPDATE effect_saga_entries SET hash = ? WHERE saga_id = ? AND seq = ?").run(previous, sagaId, row.seq)
  }
  db.prepare("UPDATE effect_saga_sagas SET digest = ? WHERE saga_id = ?").run(previous, sagaId)
  db.close()
}

const decisionOf = (filename: string, sagaId: string) => {
  const db = new Database(filename, { readonly: true })
  const row = db.prepare("SELECT decision FROM effect_saga_approvals WHERE saga_id = ?").get(sagaId) as {
    decision: string
  }
  db.close()
  return JSON.parse(row.decision) as Record<string, unknown>
}

describe("a journal key", () => {
  it.scoped.each([
    ["the store has no key, the Saga layer has k1", undefined, k1, "built without them"],
    ["the store signs with k1, the Saga layer has no key", k1, undefined, "built without journal keys"],
    [
      "the store signs with k1, the Saga layer has k2 only",
      k1,
      k2,
      "signs with key k1, which the Saga layer's keys do not hold"
    ],
    [
      "the store signs with k1, the Saga layer has k1 under other material",
      k1,
      `k1:${Buffer.alloc(32, 9).toString("base64")}`,
      "signs with key k1"
    ]
  ] as const)(
    "%s: the Saga layer fails to build with KeyError, before any tool runs",
    ([, storeKeys, sagaKeys, reason]) =>
      Effect.gen(function* () {
        const keyed = (keys: string | undefined) =>
          Effect.withConfigProvider(
            ConfigProvider.fromMap(new Map(keys === undefined ? [] : [["EFFECT_SAGA_JOURNAL_KEYS", keys]]))
          )
        for (const store of [Journal.layerMemory, SqlStore.layerSqlite({ filename: fileFor("mismatch") })]) {
          const built = yield* keyed(storeKeys)(Layer.build(Layer.merge(store, Approval.layerMemory)))
          const error = yield* Effect.flip(keyed(sagaKeys)(Layer.build(Saga.layer).pipe(Effect.provide(built))))
          expect(error).toMatchObject({ _tag: "KeyError", variable: "EFFECT_SAGA_JOURNAL_KEYS" })
          expect(error.message).toContain(reason)
        }
        // The same keys, in another order (a rotation under way), build.
        const store = yield* keyed(`${k1},${k2}`)(Layer.build(Layer.merge(Journal.layerMemory, Approval.layerMemory)))
        yield* keyed(`${k2},${k1}`)(Layer.build(Saga.layer).pipe(Effect.provide(store)))
      })
  )

  it.effect("signs every entry: the chain verifies only with the key that signed it", () =>
    Effect.gen(function* () {
      const filename = fileFor("signed")
      const world = makeWorld()
      yield* onFile(filename, k1)(Saga.run("signed", world.reserve("A-1")))
      const entries = yield* onFile(filename, k1)(Effect.flatMap(Journal.Journal, (journal) => journal.read("signed")))
      expect(entries.length).toBeGreaterThan(0)
      for (const entry of entries) expect(entry.mac).toMatch(/^k1:[0-9a-f]{64}$/)
      expect((yield* onFile(filename, k1)(Journal.verify("signed")))._tag).toBe("Intact")
      const other = `k1:${Buffer.alloc(32, 9).toString("base64")}`
      expect(yield* onFile(filename, other)(Journal.verify("signed"))).toMatchObject({
        _tag: "Broken",
        seq: 1,
        problem: "signature"
      })
    })
  )

  it.effect(
    "a payload edited and the whole chain and row recomputed with plain SHA-256 is refused with the key, and cannot be checked without it",
    () =>
      Effect.gen(function* () {
        const filename = fileFor("rechained")
        const world = makeWorld()
        const first = yield* onFile(
          filename,
          k1
        )(Saga.run("rechained", Effect.zipRight(world.reserve("A-1"), world.reserve("B-2"))))
        assert(first._tag === "Completed")
        edit(
          filename,
          "UPDATE effect_saga_entries SET payload = ? WHERE saga_id = ? AND phase = 'EXECUTED' AND seq = 3",
          '{"result":"res-FORGED-9"}',
          "rechained"
        )
        rechain(filename, "rechained")
        // Its entries carry MACs: a process without the key cannot check them, so it does not take the chain alone.
        expect(yield* onFile(filename, undefined)(Journal.verify("rechained"))).toMatchObject({
          _tag: "Broken",
          seq: 1,
          problem: "signature",
          reason: expect.stringContaining("carries a MAC under key k1, but this process has no journal key")
        })
        const unkeyed = yield* Effect.flip(
          onFile(
            filename,
            undefined
          )(Saga.run("rechained", Effect.zipRight(world.reserve("A-1"), world.reserve("B-2"))))
        )
        expect(unkeyed).toMatchObject({ _tag: "JournalTampered", seq: 1, problem: "signature" })
        const refused = yield* Effect.flip(
          onFile(filename, k1)(Saga.run("rechained", Effect.zipRight(world.reserve("A-1"), world.reserve("B-2"))))
        )
        expect(refused).toMatchObject({ _tag: "JournalTampered", sagaId: "rechained", seq: 3, problem: "signature" })
        const compensation = yield* Effect.flip(onFile(filename, k1)(Saga.compensate("rechained")))
        expect(compensation).toMatchObject({ _tag: "JournalTampered" })
        expect(world.calls.reserve).toBe(2)
      })
  )

  it.effect(
    "rotation: entries signed with k1 still verify once k2 is put first, and new entries are signed with k2",
    () =>
      Effect.gen(function* () {
        const filename = fileFor("rotated")
        const world = makeWorld()
        const waiting = yield* onFile(filename, k1)(Saga.run("rotated", world.program))
        assert(waiting._tag === "AwaitingApproval")
        const rotated = onFile(filename, `${k2},${k1}`)
        yield* rotated(Saga.approve("rotated", waiting.request.stepId, { by: "alice" }))
        expect(yield* rotated(Saga.run("rotated", world.program))).toMatchObject({ _tag: "Completed" })
        const entries = yield* rotated(Effect.flatMap(Journal.Journal, (journal) => journal.read("rotated")))
        const kids = entries.map((entry) => entry.mac?.split(":")[0])
        expect(kids.slice(0, 5)).toEqual(["k1", "k1", "k1", "k1", "k1"])
        expect(kids.slice(5).every((kid) => kid === "k2")).toBe(true)
        expect((yield* rotated(Journal.verify("rotated")))._tag).toBe("Intact")
        // Without k1, what it signed no longer verifies.
        expect(yield* onFile(filename, k2)(Journal.verify("rotated"))).toMatchObject({
          _tag: "Broken",
          seq: 1,
          reason: expect.stringContaining("its MAC names key k1, which is not configured here")
        })
      })
  )

  it.effect(
    "a rolling rotation: the new key put first on one host only is a break to a host without it; added after the current key everywhere first, each host takes the other's sagas",
    () =>
      Effect.gen(function* () {
        const filename = fileFor("rolling")
        const world = makeWorld()
        // Too early: host B signs with k2 while host A has only k1.
        const early = yield* onFile(filename, `${k2},${k1}`)(Saga.run("rolling-early", world.program))
        assert(early._tag === "AwaitingApproval")
        expect(yield* onFile(filename, k1)(Journal.verify("rolling-early"))).toMatchObject({
          _tag: "Broken",
          problem: "signature",
          reason: expect.stringContaining("another process signs with a key this one was not given")
        })
        // Approved there, the saga still waits in the inbox of a host that cannot check the decision: marked.
        yield* onFile(filename, `${k2},${k1}`)(Saga.approve("rolling-early", early.request.stepId, { by: "alice" }))
        const inbox = yield* onFile(filename, k1)(Approval.inbox)
        expect(inbox.filter((request) => request.sagaId === "rolling-early")).toEqual([
          expect.objectContaining({
            stepId: early.request.stepId,
            tampered: expect.stringContaining("another process signs with a key this one was not given")
          })
        ])
        // Step 1: every host has k2 after k1 (both still sign with k1); step 2: k2 first, host by host.
        const waiting = yield* onFile(filename, `${k1},${k2}`)(Saga.run("rolling", world.program))
        assert(waiting._tag === "AwaitingApproval")
        const promoted = onFile(filename, `${k2},${k1}`)
        yield* promoted(Saga.approve("rolling", waiting.request.stepId, { by: "alice" }))
        const notYet = onFile(filename, `${k1},${k2}`)
        expect(yield* notYet(Saga.run("rolling", world.program))).toMatchObject({ _tag: "Completed" })
        const kids = (yield* notYet(Effect.flatMap(Journal.Journal, (journal) => journal.read("rolling")))).map(
          (entry) => entry.mac?.split(":")[0]
        )
        expect(kids).toContain("k2")
        expect((yield* promoted(Journal.verify("rolling")))._tag).toBe("Intact")
        expect((yield* notYet(Journal.verify("rolling")))._tag).toBe("Intact")
        expect((yield* notYet(Journal.verify("rolling-early")))._tag).toBe("Intact")
      })
  )

  it.effect("a key configured over a journal written without one refuses its unsigned entries", () =>
    Effect.gen(function* () {
      const filename = fileFor("adopted")
      const world = makeWorld()
      yield* onFile(filename, undefined)(Saga.run("unsigned", world.reserve("A-1")))
      expect(yield* Effect.flip(onFile(filename, k1)(Saga.compensate("unsigned")))).toMatchObject({
        _tag: "JournalTampered",
        seq: 1,
        problem: "unsigned"
      })
    })
  )

  it.effect("bad key lists fail when the layer is built, with a KeyError naming the variable, never the key", () =>
    Effect.gen(function* () {
      const bad = [
        "k1",
        "k1:not base64!",
        `k1:${Buffer.alloc(16).toString("base64")}`,
        `${k1},${k1}`,
        "",
        `bad id:${Buffer.alloc(32).toString("base64")}`
      ]
      for (const keys of bad) {
        for (const layer of [Journal.layerMemory, SqlJournal.layerSqlite({ filename: fileFor("bad-keys") })]) {
          const error = yield* Effect.flip(
            Effect.scoped(Layer.build(layer)).pipe(
              Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["EFFECT_SAGA_JOURNAL_KEYS", keys]])))
            )
          )
          expect(Keys.isKeyError(error)).toBe(true)
          expect(error).toMatchObject({ _tag: "KeyError", variable: "EFFECT_SAGA_JOURNAL_KEYS" })
          if (keys.length > 3) expect(error.message).not.toContain(keys.slice(3, 20))
        }
      }
    })
  )
})

describe("approval decisions edited in the approvals table never run the irreversible step", () => {
  /** A saga that awaits the wire's approval, on a file, with or without a key. */
  const awaitingOn = (name: string, keys: string | undefined) =>
    Effect.gen(function* () {
      const filename = fileFor(name)
      const world = makeWorld()
      const store = onFile(filename, keys)
      const waiting = yield* store(Saga.run(name, world.program))
      assert(waiting._tag === "AwaitingApproval")
      return { filename, world, store, request: waiting.request }
    })

  const forgeApproved = (filename: string, sagaId: string, decision: object) =>
    edit(
      filename,
      "UPDATE effect_saga_approvals SET status = 'approved', decision = ? WHERE saga_id = ?",
      JSON.stringify(decision),
      sagaId
    )

  for (const keys of [undefined, k1]) {
    const mode = keys === undefined ? "without a key" : "with a key"

    it.effect(`${mode}: none → approved with the right digest is refused, the wire never runs`, () =>
      Effect.gen(function* () {
        const { filename, request, store, world } = yield* awaitingOn(`forged-${keys === undefined}`, keys)
        forgeApproved(filename, request.sagaId, {
          _tag: "Approved",
          by: "mallory",
          at: "2026-01-01T00:00:00.000Z",
          inputDigest: request.inputDigest
        })
        const refused = yield* Effect.flip(store(Saga.run(request.sagaId, world.program)))
        expect(refused).toMatchObject({ _tag: "JournalTampered", problem: "approval" })
        expect(world.calls.wire).toBe(0)
      })
    )

    it.effect(`${mode}: rejected → approved is refused, the wire never runs`, () =>
      Effect.gen(function* () {
        const { filename, request, store, world } = yield* awaitingOn(`rejected-${keys === undefined}`, keys)
        yield* store(Saga.reject(request.sagaId, request.stepId, { by: "bob", reason: "wrong account" }))
        forgeApproved(filename, request.sagaId, {
          _tag: "Approved",
          by: "bob",
          at: "2026-01-01T00:00:00.000Z",
          inputDigest: request.inputDigest
        })
        const again = yield* store(Saga.run(request.sagaId, world.program))
        expect(again._tag).toBe("Compensated")
        expect(world.calls.wire).toBe(0)
      })
    )

    it.effect(`${mode}: an approval's expiry moved forward in the table does not revive it`, () =>
      Effect.gen(function* () {
        const { filename, request, store, world } = yield* awaitingOn(`expired-${keys === undefined}`, keys)
        yield* store(
          Saga.approve(request.sagaId, request.stepId, { by: "alice", expiresAt: "1970-01-01T00:01:00.000Z" })
        )
        yield* TestClock.adjust("2 minutes")
        const decision = decisionOf(filename, request.sagaId)
        edit(
          filename,
          "UPDATE effect_saga_approvals SET decision = ? WHERE saga_id = ?",
          JSON.stringify({ ...decision, expiresAt: "2999-01-01T00:00:00.000Z" }),
          request.sagaId
        )
        const result = yield* store(Saga.run(request.sagaId, world.program))
        expect(result._tag).toBe("Compensated")
        expect(world.calls.wire).toBe(0)
      })
    )
  }

  it.effect(
    "with a key: a decision made through the store is signed; its digest, expiry or author edited is refused",
    () =>
      Effect.gen(function* () {
        const changes: ReadonlyArray<(decision: Record<string, unknown>) => object> = [
          (decision) => ({ ...decision, inputDigest: "0".repeat(64) }),
          (decision) => ({ ...decision, expiresAt: "2999-01-01T00:00:00.000Z" }),
          (decision) => ({ ...decision, by: "mallory" }),
          ({ mac: _mac, ...decision }) => decision
        ]
        for (const [index, change] of changes.entries()) {
          const { filename, request, store, world } = yield* awaitingOn(`signed-decision-${index}`, k1)
          yield* store(Approval.approve(request.requestId, { by: "alice", inputDigest: request.inputDigest }))
          const decision = decisionOf(filename, request.sagaId)
          expect(decision.mac).toMatch(/^k1:/)
          edit(
            filename,
            "UPDATE effect_saga_approvals SET decision = ? WHERE saga_id = ?",
            JSON.stringify(change(decision)),
            request.sagaId
          )
          const refused = yield* Effect.flip(store(Saga.run(request.sagaId, world.program)))
          expect(refused).toMatchObject({ _tag: "JournalTampered", problem: "approval" })
          expect(world.calls.wire).toBe(0)
        }
      })
  )
})
