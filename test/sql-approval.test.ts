import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Approval, SqlApproval, SqlStore } from "../src/index.js"
import { suite } from "./ApprovalSuite.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-sql-approval-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

suite("SqlStore.layerSqlite", SqlStore.layerSqlite({ filename: path.join(dir, "approvals.db") }))

suite(
  "SqlApproval.layer on a stock SqliteClient",
  SqlApproval.layer.pipe(Layer.provide(SqliteClient.layer({ filename: path.join(dir, "stock.db") })))
)

describe("SqlApproval store failures", () => {
  it.effect("a store that cannot be read fails with a typed JournalError, not a defect", () =>
    Effect.gen(function* () {
      const approval = yield* Approval.Approval
      const sql = yield* SqlClient.SqlClient
      yield* sql`DROP TABLE effect_saga_approvals`
      const failure = yield* Effect.flip(approval.pending)
      expect(failure._tag).toBe("JournalError")
      expect(failure.message).toContain("approval.pending")
    }).pipe(
      Effect.provide(
        SqlApproval.layer.pipe(Layer.provideMerge(SqliteClient.layer({ filename: path.join(dir, "broken.db") })))
      )
    )
  )
})

describe("SqlApproval's deprecated store layer", () => {
  it("is SqlStore's layer under its old name", () => {
    expect(SqlApproval.layerSqlite).toBe(SqlStore.layerSqlite)
  })
})
