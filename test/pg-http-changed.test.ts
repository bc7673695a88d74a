/** `changed` in the HTTP API's answers on PostgreSQL (see fixtures/postgres.ts for when it runs). */
import * as Postgres from "../src/Postgres.js"
import { suite } from "./ChangedSuite.js"
import { freshDatabase } from "./fixtures/postgres.js"

const url = await freshDatabase("effect_saga_http_changed")

suite("PostgreSQL", () => Postgres.layer({ url }))
