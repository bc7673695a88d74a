/**
 * A journal edited behind the library's back is never acted on: every command that loads a saga
 * (run, resume, start, compensate, compensateEffect, approve, reject, renewApproval, resolve,
 * Recovery) is refused with `JournalTampered`, runs no tool and writes nothing, on every store.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as SqlClient from "@effect/sql/SqlClient"
import { afterAll, assert, describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Logger, Option, Redacted, Schema } from "effect"
import {
  Approval,
  Compensable,
  Journal,
  Outcome,
  Recovery,
  Saga,
  SagaDefinition,
  SqlJournal,
  SqlStore
} from "../src/index.js"
import { makeMemoryJournal } from "../src/internal/journal/memory.js"
import * as Postgres from "../src/Postgres.js"
import { freshDatabase } from "./fixtures/postgres.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-tampering-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

/** What a saga's stored state is: its entries and its row. */
interface Stored {
  readonly entries: ReadonlyArray<Journal.Entry>
  readonly record: Journal.SagaRecord
}

/** A store the tests can edit behind the library's back, and read row by row. */
interface Backend {
  readonly layer: Layer.Layer<Saga.Saga | Journal.Journal | Approval.Approval, unknown>
  /** Replaces a saga's entries and row as `edit` says, without the library. */
  readonly tamper: (sagaId: string, edit: (stored: Stored) => Stored) => Effect.Effect<void, unknown>
  /** Every stored row of a saga, as the store holds it. */
  readonly rows: (sagaId: string) => Effect.Effect<unknown, unknown>
  /** Sets a column of a saga's rows in the approvals table, without the library (SQL stores only). */
  readonly editApproval?: (sagaId: string, column: string, value: string | Uint8Array) => Effect.Effect<void, unknown>
  /** Deletes a saga's rows in the approvals table, without the library (SQL stores only). */
  readonly deleteApprovals?: (sagaId: string) => Effect.Effect<void, unknown>
}

// --- the edits -------------------------------------------------------------------------------------

const lastOf = (stored: Stored) => stored.entries[stored.entries.length - 1]!

const rowAt = (stored: Stored, entries: ReadonlyArray<Journal.Entry>): Journal.SagaRecord => {
  const last = entries[entries.length - 1]!
  return { ...stored.record, revision: last.seq, digest: last.hash }
}

/** A receipt's text, which no error, status or reason may show. */
const LEAKED = "LEAK-RECEIPT-7f3a"

const edits: ReadonlyArray<readonly [string, (stored: Stored) => Stored]> = [
  [
    "(a) one payload edited",
    (stored) => ({
      ...stored,
      entries: stored.entries.map((entry) =>
        entry.phase === "EXECUTED" && entry.toolName === "reserve"
          ? { ...entry, payload: '{"result":"res-FORGED-9"}' }
          : entry
      )
    })
  ],
  [
    "(b) an entry deleted in the middle",
    (stored) => ({ ...stored, entries: stored.entries.filter((e) => e.seq !== 2) })
  ],
  ["(c) the last entry deleted, the row left", (stored) => ({ ...stored, entries: stored.entries.slice(0, -1) })],
  [
    "(d) a forged entry appended over a wrong predecessor, the row moved to it",
    (stored) => {
      const last = lastOf(stored)
      const forged = {
        ...last,
        seq: last.seq + 1,
        stepId: null,
        toolName: null,
        phase: "SAGA_COMPLETED" as const,
        input: null,
        payload: null
      }
      const { mac: _mac, ...unsigned } = { ...forged, hash: Journal.hashEntry("f".repeat(64), forged) }
      const entries = [...stored.entries, unsigned]
      return { entries, record: rowAt(stored, entries) }
    }
  ],
  [
    "(e) the saga row's digest edited",
    (stored) => ({ ...stored, record: { ...stored.record, digest: "e".repeat(64) } })
  ],
  [
    "(f) the saga row's status edited (a saga made finished, or a finished one open)",
    (stored) => ({
      ...stored,
      record: { ...stored.record, status: stored.record.status === "completed" ? "suspended" : "completed" }
    })
  ],
  [
    "(g) a payload put out of shape (a receipt that is not text), the chain and the row re-computed",
    (stored) => {
      let previous = Journal.empty.digest
      const entries = stored.entries.map((entry) => {
        const edited =
          entry.phase === "EXECUTED" && entry.toolName === "reserve"
            ? { ...entry, payload: `{"result":"res-A-1","receipt":{"token":"${LEAKED}"}}` }
            : entry
        const { mac: _mac, hash: _hash, ...content } = edited
        previous = Journal.hashEntry(previous, content)
        return { ...content, hash: previous }
      })
      return { entries, record: rowAt(stored, entries) }
    }
  ],
  [
    "(h) a payload's required field removed (an EXECUTED without its result), the chain and the row re-computed",
    (stored) => {
      let previous = Journal.empty.digest
      const entries = stored.entries.map((entry) => {
        const edited =
          entry.phase === "EXECUTED" && entry.toolName === "reserve" ? { ...entry, payload: '{"receipt":"x"}' } : entry
        const { mac: _mac, hash: _hash, ...content } = edited
        previous = Journal.hashEntry(previous, content)
        return { ...content, hash: previous }
      })
      return { entries, record: rowAt(stored, entries) }
    }
  ]
]

// --- the world ---------------------------------------------------------------------------------------

const makeWorld = () => {
  const calls = { reserve: 0, release: 0, wire: 0, probe: 0 }
  const reserve = Compensable.make({
    name: "reserve",
    input: Schema.String,
    success: Schema.String,
    execute: (sku) =>
      Effect.sync(() => {
        calls.reserve++
        return `res-${sku}`
      }),
    compensate: () =>
      Effect.sync(() => {
        calls.release++
      })
  })
  const wire = Compensable.make({
    name: "wire",
    input: Schema.Struct({ amount: Schema.Int }),
    success: Schema.String,
    reversibility: "irreversible",
    execute: ({ amount }) =>
      Effect.sync(() => {
        calls.wire++
        return `wire-${amount}`
      })
  })
  const probe = Compensable.make({
    name: "probe",
    input: Schema.String,
    success: Schema.String,
    execute: () =>
      Effect.suspend(() => {
        calls.probe++
        return Effect.fail(Outcome.unknown("the provider did not answer"))
      }),
    compensate: () => Effect.void
  })
  const completed = Effect.zipRight(reserve("A-1"), reserve("B-2"))
  const toWire = Effect.zipRight(reserve("A-1"), wire({ amount: 5000 }))
  const probing = Effect.zipRight(reserve("A-1"), probe("x"))
  const Order = SagaDefinition.make("order", {
    input: Schema.String,
    program: (sku: string) => Effect.zipRight(reserve(sku), Effect.interrupt)
  })
  const snapshot = () => ({ ...calls })
  return { calls, snapshot, completed, toWire, probing, Order }
}

type World = ReturnType<typeof makeWorld>

/**
 * A saga in the state a command needs, and the command, run on that saga with what it names (a
 * step id or an effect id), as an operator read it before the journal was edited.
 */
interface Case {
  readonly command: string
  readonly prepare: (world: World, sagaId: string) => Effect.Effect<void, unknown, Saga.Saga>
  readonly act: (
    world: World,
    sagaId: string,
    named: Named
  ) => Effect.Effect<unknown, unknown, Saga.Saga | Journal.Journal>
}

/** The ids an operator would have read off the saga's status. */
interface Named {
  readonly wire: string
  readonly probe: string
  readonly firstEffect: string
}

const namedIn = (sagaId: string) =>
  Effect.map(
    Saga.status(sagaId),
    ({ steps }): Named => ({
      wire: steps.find((step) => step.toolName === "wire")?.stepId ?? "",
      probe: steps.find((step) => step.toolName === "probe")?.stepId ?? "",
      firstEffect: steps[0]?.effectId ?? ""
    })
  )

const awaiting = (world: World, sagaId: string) =>
  Effect.flatMap(Saga.run(sagaId, world.toWire), (result) =>
    result._tag === "AwaitingApproval"
      ? Effect.void
      : Effect.dieMessage(`expected AwaitingApproval, got ${result._tag}`)
  )

const wireStep = (sagaId: string) =>
  Effect.map(Saga.status(sagaId), (status) => status.steps.find((step) => step.toolName === "wire")!.stepId)

const cases: ReadonlyArray<Case> = [
  { command: "run", prepare: (w, id) => Saga.run(id, w.completed), act: (w, id) => Saga.run(id, w.completed) },
  { command: "resume", prepare: (w, id) => Saga.run(id, w.completed), act: (w, id) => Saga.resume(id, w.completed) },
  {
    command: "run of an approved step",
    prepare: (w, id) =>
      Effect.zipRight(
        awaiting(w, id),
        Effect.flatMap(wireStep(id), (stepId) => Saga.approve(id, stepId, { by: "alice" }))
      ),
    act: (w, id) => Saga.run(id, w.toWire)
  },
  { command: "compensate", prepare: (w, id) => Saga.run(id, w.completed), act: (_, id) => Saga.compensate(id) },
  {
    command: "compensateEffect",
    prepare: (w, id) => Saga.run(id, w.completed),
    act: (_, _id, named) => Saga.compensateEffect(named.firstEffect)
  },
  {
    command: "approve",
    prepare: awaiting,
    act: (_, id, named) => Saga.approve(id, named.wire, { by: "alice" })
  },
  {
    command: "reject",
    prepare: awaiting,
    act: (_, id, named) => Saga.reject(id, named.wire, { by: "bob", reason: "no" })
  },
  {
    command: "renewApproval",
    prepare: (w, id) =>
      Effect.zipRight(
        awaiting(w, id),
        Effect.flatMap(wireStep(id), (stepId) => Saga.approve(id, stepId, { by: "alice" }))
      ),
    act: (_, id, named) => Saga.renewApproval(id, named.wire, { by: "carol" })
  },
  {
    command: "resolve",
    prepare: (w, id) => Saga.run(id, w.probing),
    act: (_, id, named) => Saga.resolve(id, named.probe, { outcome: "applied", by: "dave", result: "found" })
  },
  {
    command: "Recovery.resume",
    prepare: (w, id) =>
      Effect.flatMap(Saga.start(w.Order, id, "A-1"), (result) =>
        result._tag === "Suspended" ? Effect.void : Effect.dieMessage(`expected Suspended, got ${result._tag}`)
      ),
    act: (w, id) => Effect.flatMap(Recovery.make({ definitions: [w.Order] }), (recovery) => recovery.resume(id))
  }
]

// --- the stores ----------------------------------------------------------------------------------------

/** The memory journal, with a saga's stored state replaced behind its back (what `read` and `get` then answer). */
const memoryBackend = (): Backend => {
  const inner = makeMemoryJournal()
  const forged = new Map<string, Stored>()
  const journal = Journal.Journal.of({
    ...inner,
    read: (sagaId) => {
      const edited = forged.get(sagaId)
      return edited === undefined ? inner.read(sagaId) : Effect.succeed(edited.entries)
    },
    get: (sagaId) => {
      const edited = forged.get(sagaId)
      return edited === undefined ? inner.get(sagaId) : Effect.succeed(Option.some(edited.record))
    }
  })
  const stores = Layer.merge(Layer.succeed(Journal.Journal, journal), Approval.layerMemory)
  return {
    layer: Saga.layer.pipe(Layer.provideMerge(stores)),
    tamper: (sagaId, edit) =>
      Effect.gen(function* () {
        const entries = yield* inner.read(sagaId)
        const record = Option.getOrThrow(yield* inner.get(sagaId))
        forged.set(sagaId, edit({ entries, record }))
      }),
    rows: (sagaId) =>
      Effect.gen(function* () {
        const record = yield* inner.get(sagaId)
        return { entries: yield* inner.read(sagaId), record, forged: forged.get(sagaId) }
      })
  }
}

/** An SQL store, edited with plain SQL on a connection of its own. */
const sqlBackend = (
  stores: Layer.Layer<Journal.Journal | Approval.Approval, unknown>,
  client: Layer.Layer<SqlClient.SqlClient, unknown>
): Backend => {
  const withSql = <A>(f: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) =>
    Effect.scoped(Effect.flatMap(SqlClient.SqlClient, f).pipe(Effect.provide(client)))
  return {
    layer: Saga.layer.pipe(Layer.provideMerge(stores)),
    tamper: (sagaId, edit) =>
      withSql((sql) =>
        Effect.gen(function* () {
          const entries = yield* Journal.Journal.pipe(
            Effect.flatMap((journal) => journal.read(sagaId)),
            Effect.provide(SqlJournal.layer),
            Effect.provideService(SqlClient.SqlClient, sql)
          )
          const rows = yield* sql<{
            readonly revision: number
            readonly digest: string
            readonly status: Journal.SagaStatus
          }>`SELECT revision, digest, status FROM effect_saga_sagas WHERE saga_id = ${sagaId}`
          const stored: Stored = {
            entries,
            record: {
              sagaId,
              status: rows[0]!.status,
              revision: Number(rows[0]!.revision),
              digest: rows[0]!.digest,
              createdAt: "",
              updatedAt: "",
              lease: null
            }
          }
          const edited = edit(stored)
          yield* sql`DELETE FROM effect_saga_entries WHERE saga_id = ${sagaId}`
          for (const entry of edited.entries) {
            yield* sql`INSERT INTO effect_saga_entries ${sql.insert({
              saga_id: entry.sagaId,
              seq: entry.seq,
              step_id: entry.stepId,
              tool_name: entry.toolName,
              phase: entry.phase,
              input: entry.input,
              payload: entry.payload,
              at: entry.at,
              hash: entry.hash,
              mac: entry.mac ?? null
            })}`
          }
          yield* sql`UPDATE effect_saga_sagas SET revision = ${edited.record.revision}, digest = ${edited.record.digest},
status = ${edited.record.status} WHERE saga_id = ${sagaId}`
        })
      ),
    rows: (sagaId) =>
      withSql((sql) =>
        Effect.all([
          sql`SELECT * FROM effect_saga_entries WHERE saga_id LIKE ${`${sagaId}%`} ORDER BY saga_id, seq`,
          sql`SELECT * FROM effect_saga_sagas WHERE saga_id LIKE ${`${sagaId}%`} ORDER BY saga_id`,
          sql`SELECT * FROM effect_saga_approvals WHERE saga_id LIKE ${`${sagaId}%`} ORDER BY request_id`
        ])
      ),
    editApproval: (sagaId, column, value) =>
      withSql((sql) => sql`UPDATE effect_saga_approvals SET ${sql(column)} = ${value} WHERE saga_id = ${sagaId}`),
    deleteApprovals: (sagaId) => withSql((sql) => sql`DELETE FROM effect_saga_approvals WHERE saga_id = ${sagaId}`)
  }
}

const sqliteBackend = (): Backend => {
  const filename = path.join(dir, `${Math.random().toString(36).slice(2)}.db`)
  return sqlBackend(SqlStore.layerSqlite({ filename }), SqlJournal.layerSqliteClient({ filename }))
}

// --- the suite -------------------------------------------------------------------------------------------

const matrix = (name: string, backend: () => Backend) =>
  describe(`a tampered journal is never acted on: ${name}`, () => {
    for (const { command, prepare, act } of cases) {
      for (const [index, [edit, change]] of edits.entries()) {
        it.effect(`${command}, ${edit}: JournalTampered, no tool runs, nothing is written`, () => {
          const store = backend()
          const world = makeWorld()
          const sagaId = `saga-${command.replace(/\W+/g, "-")}-${index}`
          return Effect.gen(function* () {
            yield* prepare(world, sagaId)
            const named = yield* namedIn(sagaId)
            yield* store.tamper(sagaId, change)
            const before = yield* store.rows(sagaId)
            const calls = world.snapshot()
            const error = yield* Effect.flip(act(world, sagaId, named))
            expect(error).toMatchObject({ _tag: "JournalTampered", sagaId })
            assert(error instanceof Journal.JournalTampered)
            expect(error.message).toContain("nothing was run or written")
            expect(error.message).not.toContain(LEAKED)
            expect(world.snapshot()).toEqual(calls)
            expect(yield* store.rows(sagaId)).toEqual(before)
            const status = yield* Saga.status(sagaId)
            expect(status.tampered).toMatchObject({ seq: error.seq, problem: error.problem })
            expect(JSON.stringify(status)).not.toContain(LEAKED)
            expect(yield* Journal.verify(sagaId)).toMatchObject({ _tag: "Broken", seq: error.seq })
            const listed = (yield* Saga.list()).find((summary) => summary.sagaId === sagaId)
            expect(listed?.tampered?.seq).toBe(error.seq)
          }).pipe(Effect.provide(store.layer))
        })
      }
    }

    it.effect("a seq out of order names a gap as removed, a repeated one as copied", () =>
      Effect.gen(function* () {
        const world = makeWorld()
        yield* Saga.run("seq-order", world.completed)
        const entries = yield* Effect.flatMap(Journal.Journal, (journal) => journal.read("seq-order"))
        expect(Journal.verifyEntries([entries[0]!, entries[2]!, ...entries.slice(3)])).toMatchObject({
          _tag: "Broken",
          seq: 3,
          problem: "sequence",
          reason: "expected seq 2, found 3: an entry was removed or moved"
        })
        expect(Journal.verifyEntries([...entries.slice(0, 3), entries[2]!, ...entries.slice(3)])).toMatchObject({
          _tag: "Broken",
          seq: 3,
          problem: "sequence",
          reason: "expected seq 4, found 3: an entry was copied or moved"
        })
      }).pipe(Effect.provide(backend().layer))
    )

    it.effect("the break names what is wrong: hash, sequence, truncation, the row", () => {
      const store = backend()
      const world = makeWorld()
      return Effect.gen(function* () {
        const problems: Array<string> = []
        for (const [index, [, change]] of edits.entries()) {
          const sagaId = `named-${index}`
          yield* Saga.run(sagaId, world.completed)
          yield* store.tamper(sagaId, change)
          const status = yield* Saga.status(sagaId)
          problems.push(`${status.tampered?.problem}@${status.tampered?.seq}`)
        }
        // Entries: 1 SAGA_STARTED, 2–3 reserve A-1, 4–5 reserve B-2, 6 SAGA_COMPLETED.
        expect(problems).toEqual([
          "hash@3",
          "sequence@3",
          "truncated@6",
          "hash@7",
          "row@6",
          "row@6",
          "undecodable@3",
          "undecodable@3"
        ])
      }).pipe(Effect.provide(store.layer))
    })

    if (name !== "Journal.layerMemory") {
      it.effect(
        "an open saga whose row was edited to a finished status is never pruned: its journal says it is open",
        () => {
          const store = backend()
          const world = makeWorld()
          return Effect.gen(function* () {
            yield* awaiting(world, "open-edited")
            yield* store.tamper("open-edited", edits[5]![1])
            expect(yield* Saga.status("open-edited")).toMatchObject({
              status: "completed",
              tampered: { problem: "row", reason: expect.stringContaining("its journal says awaiting_approval") }
            })
            const journal = yield* Journal.Journal
            expect(yield* journal.prune("2999-01-01T00:00:00.000Z")).not.toContain("open-edited")
            expect((yield* journal.read("open-edited")).length).toBeGreaterThan(0)
          }).pipe(Effect.provide(store.layer))
        }
      )
    }

    if (name !== "Journal.layerMemory") {
      it.effect(
        "a saga row that no longer decodes is a break (row, seq 1) to every read, not the failure of a list",
        () => {
          const store = backend()
          const world = makeWorld()
          return Effect.gen(function* () {
            yield* Saga.run("row-healthy", world.completed)
            yield* awaiting(world, "row-bogus")
            yield* store.tamper("row-bogus", (stored) => ({
              ...stored,
              record: { ...stored.record, status: "bogus" as Journal.SagaStatus }
            }))
            const tampered = { seq: 1, problem: "row", reason: expect.stringContaining('status "bogus"') }
            const listed = yield* Saga.list()
            expect(listed.find((summary) => summary.sagaId === "row-healthy")?.tampered).toBeUndefined()
            expect(listed.find((summary) => summary.sagaId === "row-bogus")).toMatchObject({
              status: "awaiting_approval",
              tampered
            })
            expect(yield* Saga.status("row-bogus")).toMatchObject({ status: "awaiting_approval", tampered })
            expect(yield* Journal.verify("row-bogus")).toMatchObject({ _tag: "Broken", ...tampered })
            const calls = world.snapshot()
            expect(yield* Effect.flip(Saga.run("row-bogus", world.completed))).toMatchObject({
              _tag: "JournalTampered",
              seq: 1,
              problem: "row"
            })
            expect(world.snapshot()).toEqual(calls)
          }).pipe(Effect.provide(store.layer))
        }
      )
    }

    if (name !== "Journal.layerMemory") {
      /** Edits of an awaiting saga's approvals row: the columns set, what the reason names, whether `pending` lists it. */
      const rowEdits: ReadonlyArray<{
        readonly set: Readonly<Record<string, string>>
        readonly reason: string
        readonly listed: boolean
      }> = [
        {
          set: { status: "weird" },
          reason: 'its status column says "weird", not pending, approved or rejected',
          listed: true
        },
        { set: { decision: "{not json" }, reason: "its decision column does not decode", listed: true },
        { set: { decision: '{"_tag":"Maybe"}' }, reason: "its decision column does not decode", listed: true },
        {
          set: { decision: '{"_tag":"Approved","by":"mallory","at":"2026-01-01T00:00:00.000Z","inputDigest":"0"}' },
          reason: "its status column says pending, its decision column approved",
          listed: true
        },
        {
          set: { status: "approved" },
          reason: "its status column says approved, its decision column pending",
          listed: false
        },
        {
          set: { status: "approved", decision: "{not json" },
          reason: "its decision column does not decode",
          listed: false
        }
      ]

      for (const [index, { set, reason, listed }] of rowEdits.entries()) {
        it.effect(
          `an approvals row edited (${JSON.stringify(set)}) is approval tampering: run, approve, reject and renewApproval say so, ${listed ? "pending lists it marked" : "pending does not list it"}, compensate ends the saga`,
          () => {
            const store = backend()
            const world = makeWorld()
            const sagaId = `approval-row-${index}`
            const logs: Array<string> = []
            const capture = Logger.add(
              Logger.make(({ logLevel, message }) => logs.push(`${logLevel.label} ${String(message)}`))
            )
            return Effect.gen(function* () {
              yield* awaiting(world, "approval-row-healthy")
              yield* awaiting(world, sagaId)
              const named = yield* namedIn(sagaId)
              for (const [column, value] of Object.entries(set)) yield* store.editApproval!(sagaId, column, value)
              const asked = (yield* Effect.flatMap(Journal.Journal, (journal) => journal.read(sagaId))).find(
                (entry) => entry.phase === "AWAITING_APPROVAL"
              )!
              const before = yield* store.rows(sagaId)
              const calls = world.snapshot()
              const tampered = {
                _tag: "JournalTampered",
                sagaId,
                seq: asked.seq,
                problem: "approval",
                reason: `approval request ${sagaId}/${named.wire} cannot be trusted: the approvals table's row was edited: ${reason}`
              }
              const commands: ReadonlyArray<Effect.Effect<unknown, unknown, Saga.Saga>> = [
                Saga.run(sagaId, world.toWire),
                Saga.approve(sagaId, named.wire, { by: "alice" }),
                Saga.reject(sagaId, named.wire, { by: "bob", reason: "no" }),
                // Not approved in the journal: the edited row is still what it reports, not "not approved yet".
                Saga.renewApproval(sagaId, named.wire, { by: "carol" })
              ]
              for (const command of commands) {
                const error = yield* Effect.flip(command)
                expect(error).toMatchObject(tampered)
                expect(String((error as Journal.JournalTampered).message)).not.toContain("readonly")
              }
              expect(world.snapshot()).toEqual(calls)
              expect(yield* store.rows(sagaId)).toEqual(before)
              // The journal verifies: the break is in the approvals table, which only a run or a command reads.
              expect((yield* Saga.status(sagaId)).tampered).toBeUndefined()

              const pending = yield* Approval.pending
              expect(pending.find((request) => request.sagaId === "approval-row-healthy")?.tampered).toBeUndefined()
              const marked = pending.filter((request) => request.sagaId === sagaId)
              expect(marked).toEqual(
                listed
                  ? [
                      expect.objectContaining({
                        stepId: named.wire,
                        tampered: `the approvals table's row was edited: ${reason}`
                      })
                    ]
                  : []
              )
              if (listed) {
                const journal = yield* Journal.Journal
                expect(Approval.journaledRequest(marked[0]!, yield* journal.read(sagaId)).problem).toEqual({
                  seq: asked.seq,
                  problem: "approval",
                  reason: `the approvals table's row was edited: ${reason}`
                })
              }

              const report = yield* Saga.compensate(sagaId)
              expect(report.status).toBe("compensated")
              expect(world.calls.release).toBe(calls.release + 1)
              expect(world.calls.wire).toBe(0)
              expect(logs).toContainEqual(
                `WARN effect-saga: the approval request ${sagaId}/${named.wire} was not withdrawn: the approvals table's row was edited: ${reason}`
              )
            }).pipe(Effect.provide(Layer.merge(store.layer, capture)))
          }
        )
      }

      it.effect("an approved step whose approvals row was edited is renewed by no one: JournalTampered", () => {
        const store = backend()
        const world = makeWorld()
        return Effect.gen(function* () {
          yield* awaiting(world, "approval-row-renew")
          const named = yield* namedIn("approval-row-renew")
          yield* Saga.approve("approval-row-renew", named.wire, { by: "alice" })
          yield* store.editApproval!("approval-row-renew", "decision", "{not json")
          expect(
            yield* Effect.flip(Saga.renewApproval("approval-row-renew", named.wire, { by: "carol" }))
          ).toMatchObject({
            _tag: "JournalTampered",
            problem: "approval",
            reason: expect.stringContaining("its decision column does not decode")
          })
        }).pipe(Effect.provide(store.layer))
      })

      it.effect("a request whose input copy was edited in the approvals table is approved by no one", () => {
        const store = backend()
        const world = makeWorld()
        return Effect.gen(function* () {
          yield* awaiting(world, "approval-copy")
          const named = yield* namedIn("approval-copy")
          yield* store.editApproval!("approval-copy", "input", '{"amount":1}')
          const before = yield* store.rows("approval-copy")
          expect(yield* Effect.flip(Saga.approve("approval-copy", named.wire, { by: "alice" }))).toMatchObject({
            _tag: "JournalTampered",
            problem: "approval",
            reason: expect.stringContaining("the approvals table's copy of the input is not the one the journal holds")
          })
          expect(yield* store.rows("approval-copy")).toEqual(before)
          // Rejecting it runs nothing: it still ends the saga.
          expect((yield* Saga.reject("approval-copy", named.wire, { by: "bob", reason: "edited" })).status).toBe(
            "compensated"
          )
        }).pipe(Effect.provide(store.layer))
      })

      it.effect(
        "a request whose time of request was edited in its pending row is marked by the inbox and approved by no one, until a run registers it again",
        () => {
          const store = backend()
          const world = makeWorld()
          return Effect.gen(function* () {
            yield* awaiting(world, "approval-time")
            const named = yield* namedIn("approval-time")
            yield* store.editApproval!("approval-time", "requested_at", "1999-01-01T00:00:00.000Z")
            const journal = yield* Journal.Journal
            const listed = (yield* Approval.inbox).filter((request) => request.sagaId === "approval-time")
            const problem = Approval.journaledRequest(listed[0]!, yield* journal.read("approval-time")).problem
            expect(problem?.reason).toContain("names another tool or time than the journal holds")
            const before = yield* store.rows("approval-time")
            expect(yield* Effect.flip(Saga.approve("approval-time", named.wire, { by: "alice" }))).toMatchObject({
              _tag: "JournalTampered",
              problem: "approval",
              reason: expect.stringContaining(problem!.reason)
            })
            expect(yield* store.rows("approval-time")).toEqual(before)
            // A run asks again with the journal's request, which replaces the copy: nothing is marked now.
            expect((yield* Saga.run("approval-time", world.toWire))._tag).toBe("AwaitingApproval")
            const again = (yield* Approval.inbox).filter((request) => request.sagaId === "approval-time")
            expect(Approval.journaledRequest(again[0]!, yield* journal.read("approval-time")).problem).toBeNull()
            yield* Saga.approve("approval-time", named.wire, { by: "alice" })
            expect((yield* Saga.run("approval-time", world.toWire))._tag).toBe("Completed")
            expect(world.calls.wire).toBe(1)
          }).pipe(Effect.provide(store.layer))
        }
      )
    }

    if (name !== "Journal.layerMemory") {
      it.effect("a request whose approvals row was deleted is registered again from the journal by approve", () => {
        const store = backend()
        const world = makeWorld()
        return Effect.gen(function* () {
          yield* awaiting(world, "approval-gone")
          const named = yield* namedIn("approval-gone")
          yield* store.deleteApprovals!("approval-gone")
          expect((yield* Approval.pending).map((request) => request.sagaId)).not.toContain("approval-gone")
          yield* Saga.approve("approval-gone", named.wire, { by: "alice" })
          expect((yield* Saga.run("approval-gone", world.toWire))._tag).toBe("Completed")
        }).pipe(Effect.provide(store.layer))
      })
    }

    if (name === "SqlStore.layerSqlite") {
      it.effect("an entry whose seq was edited to text or a fraction is blamed at the seq it took", () => {
        const store = backend()
        const world = makeWorld()
        return Effect.gen(function* () {
          for (const [sagaId, seq, shown] of [
            ["seq-text", "x", '"x"'],
            ["seq-fraction", 3.5, "3.5"]
          ] as const) {
            yield* Saga.run(sagaId, world.completed)
            // SQLite sorts text after every number: by position the edited row would read as the sixth.
            yield* store.tamper(sagaId, (stored) => ({
              ...stored,
              entries: stored.entries.map((entry) => (entry.seq === 3 ? { ...entry, seq: seq as never } : entry))
            }))
            const tampered = {
              seq: 3,
              problem: "undecodable",
              reason: `the stored entry does not decode: seq ${shown} is not a positive integer`
            }
            expect(yield* Journal.verify(sagaId)).toEqual({ _tag: "Broken", ...tampered })
            expect((yield* Saga.status(sagaId)).tampered).toEqual(tampered)
          }
        }).pipe(Effect.provide(store.layer))
      })

      it.effect(
        "an approvals row whose request does not decode is logged and left out of pending, not a failure of the list",
        () => {
          const store = backend()
          const world = makeWorld()
          const logs: Array<string> = []
          const capture = Logger.add(
            Logger.make(({ logLevel, message }) => logs.push(`${logLevel.label} ${String(message)}`))
          )
          return Effect.gen(function* () {
            yield* awaiting(world, "approval-blob-healthy")
            yield* awaiting(world, "approval-blob")
            const named = yield* namedIn("approval-blob")
            yield* store.editApproval!("approval-blob", "input", new Uint8Array([0, 1, 2]))
            expect((yield* Approval.pending).map((request) => request.sagaId)).toEqual(["approval-blob-healthy"])
            expect(logs).toEqual([
              `WARN effect-saga: approval request approval-blob/${named.wire} is not listed as pending: the approvals table's row was edited: its input column does not decode`
            ])
            expect(yield* Effect.flip(Saga.run("approval-blob", world.toWire))).toMatchObject({
              _tag: "JournalTampered",
              problem: "approval",
              reason: expect.stringContaining("its input column does not decode")
            })
          }).pipe(Effect.provide(Layer.merge(store.layer, capture)))
        }
      )
    }

    it.effect("a tampered saga's status shows only the steps before the break", () => {
      const store = backend()
      const world = makeWorld()
      return Effect.gen(function* () {
        yield* Saga.run("prefix", world.completed)
        yield* store.tamper("prefix", edits[0]![1])
        const status = yield* Saga.status("prefix")
        expect(status.tampered).toMatchObject({ seq: 3, problem: "hash" })
        expect(status.steps.map((step) => [step.toolName, step.state])).toEqual([["reserve", "unknown"]])
      }).pipe(Effect.provide(store.layer))
    })
  })

matrix("Journal.layerMemory", memoryBackend)
matrix("SqlStore.layerSqlite", sqliteBackend)

const pgUrl = await freshDatabase("tampering")
describe("PostgreSQL", () => {
  matrix("Postgres.layer", () =>
    sqlBackend(
      Postgres.layer({ url: Redacted.make(pgUrl), maxConnections: 4 }),
      Postgres.layerClient({ url: Redacted.make(pgUrl), maxConnections: 1 })
    )
  )
})
