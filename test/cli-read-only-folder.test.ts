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
afterAll(() => {
  fs.chmodSync(dir, 0o755)
  fs.rmSync(dir, { recursive: true, force: true })
})

const NOBODY = 65534
const cli = path.join(root, "bin", "effect-saga.js")
/** Root, and the CLI readable by `nobody` (a clone in a folder only root may enter is not). */
const runsAsNobody =
  process.getuid?.() === 0 &&
  spawnSync(process.execPath, [cli, "--version"], { cwd: os.tmpdir(), uid: NOBODY, gid: NOBODY }).status === 0

describe("effect-saga on a journal in a folder it cannot write", { timeout: 60_000 }, () => {
  it.live.skipIf(!runsAsNobody)(
    "a read command is refused with SQLite's reason and what to do, the file as it was",
    () =>
      Effect.gen(function* () {
        const folder = path.join(dir, "backup")
        fs.mkdirSync(folder)
        const db = path.join(folder, "sagas.db")
        yield* Effect.scoped(Layer.build(SqlStore.layerSqlite({ filename: db })))
        for (const suffix of ["-wal", "-shm"]) fs.rmSync(`${db}${suffix}`, { force: true })
        const before = fs.readFileSync(db)
        fs.chmodSync(dir, 0o755)
        fs.chmodSync(folder, 0o555)
        for (const command of [["list"], ["verify", "--all"]]) {
          const ended = spawnSync(process.execPath, [cli, "--db", db, ...command], {
            cwd: os.tmpdir(),
            uid: NOBODY,
            gid: NOBODY,
            encoding: "utf8"
          })
          expect({ status: ended.status, stdout: ended.stdout }).toEqual({ status: 2, stdout: "" })
          expect(ended.stderr).toBe(
            `effect-saga: journal open failed: ${db}: the database is read-only (SQLITE_READONLY_DIRECTORY: attempt to write a readonly database): SQLite writes the journal's -wal and -shm files beside it, even to read it; copy the file (with its -wal, if there is one) to a folder you can write, and read the copy\n`
          )
        }
        expect(fs.readFileSync(db).equals(before)).toBe(true)
        expect(fs.readdirSync(folder)).toEqual(["sagas.db"])
      })
  )
})
