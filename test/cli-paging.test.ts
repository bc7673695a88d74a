/**
 * The CLI's `list --limit/--offset` and `approvals --limit/--offset` read one page (the store
 * selects it), and `verify --all` verifies a page of sagas at a time with the output it always had.
 * The CLI runs in this process, on an SQLite file.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import Database from "better-sqlite3"
import { Effect, Layer, TestClock } from "effect"
import { Approval, Journal, Saga, SqlStore } from "../src/index.js"
import * as Verify from "../src/internal/cli/commands/verify.js"
import { cliInProcess as cli } from "./fixtures/cli-in-process.js"
import { sendWireTransfer } from "./fixtures/cli-tools.js"
import { journalCountingReads } from "./fixtures/counting-reads.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-cli-paging-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

let files = 0
const freshFile = () => path.join(dir, `${++files}.db`)

const onFile = <A, E>(db: string, effect: Effect.Effect<A, E, Saga.Saga | Journal.Journal | Approval.Approval>) =>
  Effect.scoped(Effect.provide(effect, Saga.layer.pipe(Layer.provideMerge(SqlStore.layerSqlite({ filename: db })))))

/** `count` sagas, `s-001` first, one a second: completed, or awaiting approval of a wire transfer. */
const seed = (count: number, awaiting = false) =>
  Effect.forEach(
    Array.from({ length: count }, (_, at) => `s-${String(at + 1).padStart(3, "0")}`),
    (sagaId) =>
      Effect.zipRight(
        TestClock.adjust("1 second"),
        Saga.run(sagaId, awaiting ? sendWireTransfer({ amount: 1, to: sagaId }) : Effect.void)
      ),
    { discard: true }
  )

const sagaColumn = (stdout: string) =>
  stdout
    .split("\n")
    .map((line) => line.split(/\s+/)[0] ?? "")
    .filter((cell) => cell.startsWith("s-"))

describe("effect-saga list and approvals, a page at a time", { timeout: 60_000 }, () => {
  it.effect("list --limit/--offset lists that page, least recently updated first, and says where it stands", () =>
    Effect.gen(function* () {
      const db = freshFile()
      yield* onFile(db, seed(5))
      const whole = yield* cli("--db", db, "list")
      expect(sagaColumn(whole.stdout)).toEqual(["s-001", "s-002", "s-003", "s-004", "s-005"])
      const page = yield* cli("--db", db, "list", "--limit", "2", "--offset", "1")
      expect(page.code).toBe(0)
      expect(sagaColumn(page.stdout)).toEqual(["s-002", "s-003"])
      expect(page.stdout.split("\n").at(-1)).toBe("sagas 2–3 of 5; the next: --offset 3")
      const last = yield* cli("--db", db, "list", "--offset", "4", "--json")
      expect((JSON.parse(last.stdout) as Array<{ sagaId: string }>).map((row) => row.sagaId)).toEqual(["s-005"])
      const filtered = yield* cli("--db", db, "list", "--status", "running", "--limit", "2")
      expect(filtered.stdout).toBe("no sagas\nnone of 0 sagas")
      const refused = yield* cli("--db", db, "list", "--limit", "0")
      expect(refused.code).not.toBe(0)
      expect(refused.stderr + refused.stdout).toContain("--limit 0: give a whole number, 1 or more")
      for (const text of ["0x10", "1e1", " 2", "2.0"]) {
        const lenient = yield* cli("--db", db, "list", "--limit", text)
        expect(lenient.code, text).toBe(2)
        expect(lenient.stderr, text).toContain(
          `--limit ${JSON.stringify(text)} is not a whole number in decimal digits`
        )
      }
    })
  )

  it.effect("approvals --limit/--offset lists the requests of that page of waiting sagas", () =>
    Effect.gen(function* () {
      const db = freshFile()
      yield* onFile(db, seed(3, true))
      const page = yield* cli("--db", db, "approvals", "--limit", "1", "--offset", "1")
      expect(page.code).toBe(0)
      expect(sagaColumn(page.stdout)).toEqual(["s-002"])
      expect(page.stdout.split("\n").at(-1)).toBe("sagas with a request waiting 2–2 of 3; the next: --offset 2")
      const whole = yield* cli("--db", db, "approvals", "--json")
      expect((JSON.parse(whole.stdout) as Array<{ sagaId: string }>).map((row) => row.sagaId)).toEqual([
        "s-001",
        "s-002",
        "s-003"
      ])
    })
  )
})

describe("effect-saga verify --all, a page at a time", { timeout: 60_000 }, () => {
  it.effect("250 sagas, one tampered on the second page: the verdicts of Journal.verify, in list's order; exit 1", () =>
    Effect.gen(function* () {
      const db = freshFile()
      yield* onFile(db, seed(250))
      const file = new Database(db)
      file
        .prepare("UPDATE effect_saga_entries SET phase = 'SAGA_COMPENSATED' WHERE saga_id = ? AND seq = 2")
        .run("s-220")
      file.close()
      const expected = yield* onFile(
        db,
        Effect.flatMap(Saga.list(), (listed) =>
          Effect.forEach(listed, (saga) =>
            Effect.map(Journal.verify(saga.sagaId), (verification) => ({ sagaId: saga.sagaId, ...verification }))
          )
        )
      )
      expect(expected).toHaveLength(250)
      const json = yield* cli("--db", db, "verify", "--all", "--json")
      expect(json.code).toBe(1)
      expect(JSON.parse(json.stdout)).toEqual(expected)
      const text = yield* cli("--db", db, "verify", "--all")
      const lines = text.stdout.split("\n")
      expect(lines).toHaveLength(251)
      expect(sagaColumn(text.stdout)).toEqual(expected.map((verdict) => verdict.sagaId))
      expect(lines.find((line) => line.startsWith("s-220"))).toMatch(/^s-220 +BROKEN +at seq 2: /)
      expect(text.code).toBe(1)
    })
  )

  it.effect("reads the journals of one page of sagas, verifies them, then the next (never all before any)", () => {
    const reads: Array<string> = []
    const counting = journalCountingReads((sagaId) => reads.push(sagaId))
    return Effect.gen(function* () {
      yield* seed(250)
      reads.length = 0
      const verdicts = yield* Verify.everyVerdict
      expect(verdicts.map((verdict) => verdict.sagaId)).toEqual((yield* Saga.list()).map((saga) => saga.sagaId))
      // The first saga is verified (read a second time) before the sagas of the second page are read.
      const secondReadOfFirst = reads.indexOf("s-001", reads.indexOf("s-001") + 1)
      expect(secondReadOfFirst).toBeGreaterThan(0)
      expect(secondReadOfFirst).toBeLessThan(reads.indexOf("s-201"))
    }).pipe(Effect.provide(Saga.layer.pipe(Layer.provideMerge(Layer.merge(counting, Approval.layerMemory)))))
  })
})
