/**
 * `Saga.compensateEffect` on a saga whose row was deleted or no longer decodes answers
 * `JournalTampered` (`row`, at seq 1), as every other command and load does: not `EffectNotFound`
 * (the effect is there, in the entries) nor a `JournalError`. Nothing is run or written.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { Compensable, Saga, SqlStore } from "../src/index.js"
import { edit, snapshot } from "./fixtures/sqlite-raw.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-explicit-tampered-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

describe("Saga.compensateEffect on a saga whose row was tampered with", () => {
  it.effect.each([
    ["deleted", "DELETE FROM effect_saga_sagas WHERE saga_id = 'trip-1'"],
    ["its status no known one", "UPDATE effect_saga_sagas SET status = 'weird' WHERE saga_id = 'trip-1'"],
    ["its revision text", "UPDATE effect_saga_sagas SET revision = 'seven' WHERE saga_id = 'trip-1'"]
  ] as const)("row %s: JournalTampered (row, seq 1), the undo not run, nothing written", ([name, sql]) =>
    Effect.gen(function* () {
      const filename = path.join(dir, `${name.replace(/\W+/g, "-")}.db`)
      const undone: Array<string> = []
      const book = Compensable.make({
        name: "book",
        input: Schema.String,
        success: Schema.String,
        execute: (room) => Effect.succeed(`held-${room}`),
        compensate: (ctx) => Effect.sync(() => undone.push(ctx.result))
      })
      yield* Effect.gen(function* () {
        yield* Saga.run("trip-1", book("12"))
        const effectId = (yield* Saga.status("trip-1")).steps[0]!.effectId
        edit(filename, sql)
        const before = snapshot(filename)
        const refused = yield* Effect.flip(Saga.compensateEffect(effectId))
        expect(refused).toMatchObject({ _tag: "JournalTampered", sagaId: "trip-1", seq: 1, problem: "row" })
        expect(undone).toEqual([])
        expect(snapshot(filename)).toEqual(before)
      }).pipe(Effect.provide(Saga.layer.pipe(Layer.provideMerge(SqlStore.layerSqlite({ filename })))))
    })
  )
})
