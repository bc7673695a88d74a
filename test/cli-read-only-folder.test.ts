/**
 * A read command on a journal in a folder its user cannot write (a backup on a read-only mount):
 * SQLite writes the WAL's `-wal` and `-shm` files beside the journal even to read it, so it is
 * refused; the line says why and what to do. Run as `nobody` (uid 65534), which root can do here:
 * root itself writes any folder.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlStore } from "../src/index.js"

const root = path.resolve(import.meta.dirname, "..")
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-read-only-"))
fs.chmodSync(dir, 0o755)
afterAll(() => {
  for (const folder of fs.readdirSync(dir)) fs.chmodSync(path.join(dir, folder), 0o755)
  fs.rmSync(dir, { recursive: true, force: true })
})

const NOBODY = 65534
const cli = path.join(root, "bin", "effect-saga.js")
/** Root, and the CLI readable by `nobody` (a clone in a folder only root may enter is not). */
const runsAsNobody =
  process.getuid?.() === 0 &&
  spawnSync(process.execPath, [cli, "--version"], { cwd: os.tmpdir(), uid: NOBODY, gid: NOBODY }).status === 0

const WHAT_TO_DO =
  "SQLite writes the journal's -wal and -shm files beside it, even to read it; copy the file (with its -wal, if there is one) to a folder you can write, and read the copy"

/** A journal in a folder of its own, with the files `beside` it of those SQLite leaves; then the folder made read-only. */
const journalIn = (name: string, beside: ReadonlyArray<"-wal" | "-shm">) =>
  Effect.gen(function* () {
    const folder = path.join(dir, name)
    fs.mkdirSync(folder)
    const db = path.join(folder, "sagas.db")
    yield* Effect.scoped(Layer.build(SqlStore.layerSqlite({ filename: db })))
    for (const suffix of ["-wal", "-shm"] as const) {
      if (beside.includes(suffix)) fs.writeFileSync(`${db}${suffix}`, "")
      else fs.rmSync(`${db}${suffix}`, { force: true })
    }
    fs.chmodSync(folder, 0o555)
    return db
  })

/** `effect-saga --db db ...command` as `nobody`: its exit code, stdout and stderr. */
const asNobody = (db: string, command: ReadonlyArray<string>) => {
  const ended = spawnSync(process.execPath, [cli, "--db", db, ...command], {
    cwd: os.tmpdir(),
    uid: NOBODY,
    gid: NOBODY,
    encoding: "utf8"
  })
  return { status: ended.status, stdout: ended.stdout, stderr: ended.stderr }
}

/** Each file of the folder and its bytes. */
const filesOf = (db: string) =>
  Object.fromEntries(
    fs
      .readdirSync(path.dirname(db))
      .map((file) => [file, fs.readFileSync(path.join(path.dirname(db), file)).toString("hex")])
  )

describe("effect-saga on a journal in a folder it cannot write", { timeout: 60_000 }, () => {
  it.live.skipIf(!runsAsNobody)(
    "a read command is refused with SQLite's reason and what to do, the files as they were",
    () =>
      Effect.gen(function* () {
        const reasons = {
          // The journal alone: SQLite cannot make its -wal and -shm.
          alone: "the database is read-only (SQLITE_READONLY_DIRECTORY: attempt to write a readonly database)",
          // A copy made with its -wal (storage.md's backups), without the -shm: SQLite cannot make the -shm.
          "with its -wal": "the database file cannot be opened (SQLITE_CANTOPEN: unable to open database file)"
        }
        for (const [name, beside] of [
          ["alone", []],
          ["with its -wal", ["-wal"]]
        ] as const) {
          const db = yield* journalIn(name, beside)
          const before = filesOf(db)
          for (const command of [["list"], ["verify", "--all"]]) {
            expect(asNobody(db, command), `${name}: ${command.join(" ")}`).toEqual({
              status: 2,
              stdout: "",
              stderr: `effect-saga: journal open failed: ${db}: ${reasons[name]}: ${WHAT_TO_DO}\n`
            })
          }
          expect(filesOf(db)).toEqual(before)
        }
      })
  )

  it.live.skipIf(!runsAsNobody)("with its -wal and -shm both there, it is read", () =>
    Effect.gen(function* () {
      const db = yield* journalIn("with both", ["-wal", "-shm"])
      expect(asNobody(db, ["list"])).toEqual({ status: 0, stdout: "no sagas\n", stderr: "" })
    })
  )
})
