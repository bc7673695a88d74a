import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import { afterAll } from "@effect/vitest"
import { Layer } from "effect"
import { SqlApproval } from "../src/index.js"
import { suite } from "./ApprovalSuite.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-sql-approval-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

suite("SqlApproval.layerSqlite", SqlApproval.layerSqlite({ filename: path.join(dir, "approvals.db") }))

suite(
  "SqlApproval.layer on a stock SqliteClient",
  SqlApproval.layer.pipe(Layer.provide(SqliteClient.layer({ filename: path.join(dir, "stock.db") })))
)
