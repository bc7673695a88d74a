/**
 * What the CLI shows of a journal edited behind the library's back: `export` of a saga whose
 * entries no longer all decode prints them as stored (no end line: not an export), and
 * `verify --all` checks the sagas whose row was deleted, which no list names. The CLI runs in this
 * process, on SQLite files and on PostgreSQL.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Approval, Journal, Saga, SqlStore } from "../src/index.js"
import * as Postgres from "../src/Postgres.js"
import { cliInProcess as cli } from "./fixtures/cli-in-process.js"
import { chargeCard, reserveInventory, ship } from "./fixtures/cli-tools.js"
import { freshDatabase, queryOn } from "./fixtures/postgres.js"
import { edit } from "./fixtures/sqlite-raw.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-cli-forensics-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

let files = 0
const freshFile = () => path.join(dir, `${++files}.db`)

const onFile = <A, E>(db: string, effect: Effect.Effect<A, E, Saga.Saga | Journal.Journal | Approval.Approval>) =>
  Effect.scoped(Effect.provide(effect, Saga.layer.pipe(Layer.provideMerge(SqlStore.layerSqlite({ filename: db })))))

/** Reserve, charge, ship: eight entries, the third the `EXECUTED` of the reservation. */
const checkout = (orderId: string) =>
  Effect.gen(function* () {
    yield* reserveInventory({ sku: `sku-${orderId}`, quantity: 1 })
    yield* chargeCard({ amount: 4200 })
    yield* ship({ orderId })
  })

/** A file with sagas `ids`, and each one's export lines (its entries, then its end line). */
const prepared = (...ids: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const db = freshFile()
    yield* onFile(
      db,
      Effect.forEach(ids, (id) => Saga.run(id, checkout(id)), { discard: true })
    )
    const exports = new Map<string, ReadonlyArray<string>>()
    for (const id of ids) exports.set(id, (yield* cli("--db", db, "export", id)).stdout.split("\n"))
    return { db, exports }
  })

/** An export line with its fields replaced by `fields`, in place. */
const withFields = (line: string, fields: Record<string, unknown>) => JSON.stringify({ ...JSON.parse(line), ...fields })

describe("effect-saga export of a saga whose entries do not all decode", { timeout: 60_000 }, () => {
  it.effect("prints every entry as stored, no end line, says why on stderr, exits 1; import refuses it", () =>
    Effect.gen(function* () {
      const { db, exports } = yield* prepared("order-1")
      const before = exports.get("order-1")!
      expect(before).toHaveLength(9)
      const entries = before.slice(0, 8)
      edit(db, "UPDATE effect_saga_entries SET phase = 'HACKED' WHERE seq = 3")
      const exported = yield* cli("--db", db, "export", "order-1")
      expect(exported).toEqual({
        code: 1,
        stdout: entries.map((line, at) => (at === 2 ? withFields(line, { phase: "HACKED" }) : line)).join("\n"),
        stderr:
          'effect-saga: journal of saga order-1 is corrupted at seq 3: the stored entry does not decode: phase "HACKED" is not a known phase; its entries printed as stored, no end line: not an export'
      })
      const file = path.join(dir, "tampered.ndjson")
      fs.writeFileSync(file, `${exported.stdout}\n`)
      const other = freshFile()
      const imported = yield* cli("--db", other, "import", file)
      expect(imported.code).toBe(2)
      expect(imported.stderr).toMatch(/^effect-saga: .*line 3/)
      expect(fs.existsSync(other)).toBe(false)
    })
  )

  it.effect("a seq made text, a payload made bytes: each row as the store holds it, bytes in hex", () =>
    Effect.gen(function* () {
      const { db, exports } = yield* prepared("order-1", "order-2")
      edit(db, "UPDATE effect_saga_entries SET seq = 'x' WHERE saga_id = 'order-1' AND seq = 4")
      edit(db, "UPDATE effect_saga_entries SET payload = X'00ff' WHERE saga_id = 'order-2' AND seq = 3")
      const [textSeq, bytes] = yield* Effect.all([
        cli("--db", db, "export", "order-1"),
        cli("--db", db, "export", "order-2")
      ])
      const one = exports.get("order-1")!.slice(0, 8)
      // SQLite orders text after every number: the row of seq "x" comes last.
      expect(textSeq.code).toBe(1)
      expect(textSeq.stdout.split("\n")).toEqual([
        ...one.slice(0, 3),
        ...one.slice(4),
        withFields(one[3]!, { seq: "x" })
      ])
      expect(textSeq.stderr).toContain(
        'corrupted at seq 4: the stored entry does not decode: seq "x" is not a positive integer'
      )
      const two = exports.get("order-2")!.slice(0, 8)
      expect(bytes.code).toBe(1)
      expect(bytes.stdout.split("\n")).toEqual(
        two.map((line, at) => (at === 2 ? withFields(line, { payload: { bytes: "00ff" } }) : line))
      )
      expect(bytes.stderr).toContain(
        "payload (bytes) is not text or null; its entries printed as stored, no end line: not an export"
      )
    })
  )

  it.effect(
    "a saga whose chain breaks (its last entries deleted, a payload edited) is not exported: its entries as stored, no end line, exit 1; import refuses it",
    () =>
      Effect.gen(function* () {
        const { db, exports } = yield* prepared("order-1", "order-2")
        edit(db, "DELETE FROM effect_saga_entries WHERE saga_id = 'order-1' AND seq > 5")
        edit(db, "UPDATE effect_saga_entries SET input = '\"forged\"' WHERE saga_id = 'order-2' AND seq = 2")
        const [truncated, edited] = yield* Effect.all([
          cli("--db", db, "export", "order-1"),
          cli("--db", db, "export", "order-2")
        ])
        expect(truncated).toEqual({
          code: 1,
          stdout: exports.get("order-1")!.slice(0, 5).join("\n"),
          stderr:
            "effect-saga: journal of saga order-1 does not verify at seq 6 (truncated): the saga's row says it ends at seq 8, but its journal ends at seq 5: entries were deleted; its entries printed as stored, no end line: not an export"
        })
        expect(edited.code).toBe(1)
        expect(edited.stderr).toMatch(/^effect-saga: journal of saga order-2 does not verify at seq 2 \(hash\): /)
        expect(edited.stdout.split("\n")).toHaveLength(8)
        const file = path.join(dir, "truncated.ndjson")
        fs.writeFileSync(file, `${truncated.stdout}\n`)
        const other = freshFile()
        expect((yield* cli("--db", other, "import", file)).code).toBe(2)
        expect(fs.existsSync(other)).toBe(false)
      })
  )

  it.effect("a saga whose entries all decode still exports as before, end line included, exit 0", () =>
    Effect.gen(function* () {
      const { db, exports } = yield* prepared("order-1")
      const exported = yield* cli("--db", db, "export", "order-1")
      expect(exported).toEqual({ code: 0, stdout: exports.get("order-1")!.join("\n"), stderr: "" })
      expect(JSON.parse(exports.get("order-1")!.at(-1)!)).toMatchObject({
        exportEnd: { sagaId: "order-1", entries: 8 }
      })
    })
  )
})

describe("effect-saga verify --all on a store where a saga's row was deleted", { timeout: 60_000 }, () => {
  it.effect("checks the saga by its entries: broken at seq 1 (row), after the listed sagas; exit 1", () =>
    Effect.gen(function* () {
      const { db } = yield* prepared("order-1", "order-2", "order-3")
      edit(db, "DELETE FROM effect_saga_sagas WHERE saga_id = 'order-2'")
      const json = yield* cli("--db", db, "verify", "--all", "--json")
      expect(json.code).toBe(1)
      const verdicts = JSON.parse(json.stdout) as ReadonlyArray<{ sagaId: string; _tag: string }>
      expect(verdicts.map((verdict) => [verdict.sagaId, verdict._tag])).toEqual([
        ["order-1", "Intact"],
        ["order-3", "Intact"],
        ["order-2", "Broken"]
      ])
      const alone = yield* cli("--db", db, "verify", "order-2", "--json")
      expect(verdicts[2]).toEqual(JSON.parse(alone.stdout)[0])
      expect(verdicts[2]).toMatchObject({ seq: 1, problem: "row" })
    })
  )

  it.effect("the only saga's row deleted: not 'no sagas' but the saga, BROKEN at seq 1", () =>
    Effect.gen(function* () {
      const { db } = yield* prepared("order-1")
      edit(db, "DELETE FROM effect_saga_sagas")
      const text = yield* cli("--db", db, "verify", "--all")
      expect(text.code).toBe(1)
      expect(text.stdout.split("\n")).toEqual([
        "saga     chain   detail",
        expect.stringMatching(/^order-1 {2}BROKEN {2}at seq 1: .*the row was deleted/)
      ])
    })
  )

  it.effect("Journal.sagasWithoutRow: none on the memory journal, whose entries always have their row", () =>
    Effect.gen(function* () {
      yield* Saga.run("order-1", checkout("order-1"))
      expect(yield* Journal.sagasWithoutRow).toEqual([])
    }).pipe(Effect.provide(Saga.layer.pipe(Layer.provideMerge(Layer.merge(Journal.layerMemory, Approval.layerMemory)))))
  )
})

describe("on PostgreSQL", { timeout: 60_000 }, () => {
  it.effect(
    "export of an entry whose phase was edited prints the entries as stored; verify --all finds a rowless saga",
    () =>
      Effect.gen(function* () {
        const url = yield* Effect.promise(() => freshDatabase("effect_saga_cli_forensics"))
        yield* Effect.scoped(
          Effect.provide(
            Effect.forEach(["order-1", "order-2"], (id) => Saga.run(id, checkout(id)), { discard: true }),
            Saga.layer.pipe(Layer.provideMerge(Postgres.layer({ url })))
          )
        )
        const before = (yield* cli("--db", url, "export", "order-1")).stdout.split("\n").slice(0, 8)
        yield* Effect.promise(() =>
          queryOn(url, "UPDATE effect_saga_entries SET phase = 'HACKED' WHERE saga_id = 'order-1' AND seq = 3")
        )
        yield* Effect.promise(() => queryOn(url, "DELETE FROM effect_saga_sagas WHERE saga_id = 'order-2'"))
        const exported = yield* cli("--db", url, "export", "order-1")
        expect(exported.code).toBe(1)
        expect(exported.stdout).toBe(
          before.map((line, at) => (at === 2 ? withFields(line, { phase: "HACKED" }) : line)).join("\n")
        )
        expect(exported.stderr).toContain("printed as stored, no end line: not an export")
        const verified = yield* cli("--db", url, "verify", "--all", "--json")
        expect(verified.code).toBe(1)
        expect(JSON.parse(verified.stdout)).toEqual([
          expect.objectContaining({ sagaId: "order-1", _tag: "Broken", seq: 3, problem: "undecodable" }),
          expect.objectContaining({ sagaId: "order-2", _tag: "Broken", seq: 1, problem: "row" })
        ])
      })
  )
})

describe("effect-saga verify and export of an id that cannot be a saga's", { timeout: 60_000 }, () => {
  it.effect("refuse it as every other command does (exit 2, invalid saga id), reading nothing", () =>
    Effect.gen(function* () {
      const { db } = yield* prepared("order-1")
      for (const command of ["verify", "export", "show"]) {
        for (const id of ["", "a\u0007"]) {
          const refused = yield* cli("--db", db, command, id)
          expect(refused.code).toBe(2)
          expect(refused.stdout).toBe("")
          expect(refused.stderr).toMatch(/^effect-saga: invalid saga id /)
        }
      }
    })
  )
})
