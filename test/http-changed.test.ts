/** `changed` in the HTTP API's answers, in memory and on SQLite (pg-http-changed.test.ts: PostgreSQL). */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll } from "@effect/vitest"
import { Layer } from "effect"
import { Approval, Journal, SqlStore } from "../src/index.js"
import { suite } from "./ChangedSuite.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-http-changed-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

suite("memory", () => Layer.merge(Journal.layerMemory, Approval.layerMemory))
suite("SQLite", () => SqlStore.layerSqlite({ filename: path.join(dir, "sagas.db") }))
