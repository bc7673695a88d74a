/**
 * A command that fails after it journaled entries names them on its one line, as an interrupted
 * one does: the operator learns where the saga was left, not only that a write failed. The CLI
 * runs in this process, on an SQLite file whose third write of the command a trigger refuses.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Journal, Saga, SqlStore } from "../src/index.js"
import { cliInProcess } from "./fixtures/cli-in-process.js"
import { chargeCard, reserveInventory } from "./fixtures/cli-tools.js"
import { edit } from "./fixtures/sqlite-raw.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-cli-failed-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))
const tools = fileURLToPath(new URL("./fixtures/cli-tools.ts", import.meta.url))

const onFile = <A, E>(db: string, effect: Effect.Effect<A, E, Saga.Saga | Journal.Journal>) =>
  Effect.scoped(Effect.provide(effect, Saga.layer.pipe(Layer.provideMerge(SqlStore.layerSqlite({ filename: db })))))

describe("effect-saga: a command whose write fails after it wrote", { timeout: 60_000 }, () => {
  it.live("compensate names the revisions it journaled before the store refused a write", () =>
    Effect.gen(function* () {
      const db = path.join(dir, "order.db")
      yield* onFile(
        db,
        Saga.run(
          "order-1",
          Effect.zipRight(reserveInventory({ sku: "A-1", quantity: 1 }), chargeCard({ amount: 4200 }))
        )
      )
      // The store refuses the first undo's outcome: SAGA_COMPENSATING (revision 7) and COMPENSATING
      // (revision 8) are written, the refund runs, COMPENSATED is refused.
      edit(
        db,
        "CREATE TRIGGER refuse_outcome BEFORE INSERT ON effect_saga_entries WHEN NEW.phase = 'COMPENSATED' BEGIN SELECT RAISE(ABORT, 'the disk is on fire'); END"
      )
      const failed = yield* cliInProcess("compensate", "order-1", "--register", tools, "--db", db)
      expect(failed.code).toBe(2)
      expect(failed.stderr.split("\n").at(-1)).toBe(
        "effect-saga: journal append failed: SQLITE_CONSTRAINT_TRIGGER: the disk is on fire; before that, this command journaled revisions 7–8 of saga order-1 (effect-saga show order-1 shows where it stands)"
      )
      const entries = yield* onFile(
        db,
        Effect.flatMap(Journal.Journal, (journal) => journal.read("order-1"))
      )
      expect(entries.slice(6).map((entry) => [entry.seq, entry.phase])).toEqual([
        [7, "SAGA_COMPENSATING"],
        [8, "COMPENSATING"]
      ])
    })
  )

  it.live("a command that wrote nothing before its write failed says only the error", () =>
    Effect.gen(function* () {
      const db = path.join(dir, "first.db")
      yield* onFile(db, Saga.run("order-2", reserveInventory({ sku: "B-1", quantity: 1 })))
      edit(
        db,
        "CREATE TRIGGER refuse_all BEFORE INSERT ON effect_saga_entries BEGIN SELECT RAISE(ABORT, 'the disk is on fire'); END"
      )
      const failed = yield* cliInProcess("compensate", "order-2", "--register", tools, "--db", db)
      expect(failed.code).toBe(2)
      expect(failed.stderr.split("\n").at(-1)).toBe(
        "effect-saga: journal append failed: SQLITE_CONSTRAINT_TRIGGER: the disk is on fire"
      )
    })
  )
})
