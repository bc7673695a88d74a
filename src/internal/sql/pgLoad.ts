/**
 * PostgreSQL: a saga's load (its entries and its row) as one statement, one round trip and one
 * snapshot instead of two reads. The ids come as one array, so that the loads of sagas that arrive
 * together share the statement (groupRead.ts): the rows of the sagas wanted, then their entries,
 * each found by its primary key, a saga's row first. It is sent unnamed, planned each time for the
 * tables' current size (journal.ts, `readPlannedEachTime`).
 */
import * as Effect from "effect/Effect"
import type { ReadTogether } from "../journal/together.js"
import { entriesTable, sagasTable } from "./migrations.js"
import { decodeEntries, storedRow } from "./rows.js"

/**
 * The rows of `table` for the saga ids `$1`, each id looked up by key on its own (`unnest` joined
 * `LATERAL` to a lookup, fenced by `OFFSET 0` so that it stays one lookup an id), as `alias`:
 * `saga_id = ANY($1)` of 100 ids was planned as a scan of every entry (PostgreSQL's guess, for a
 * table it has not analyzed yet, is 0.5 % of its rows an id).
 */
export const byKey = (table: string, alias: string) =>
  `unnest($1::text[]) AS wanted (id), LATERAL (SELECT * FROM "${table}" WHERE saga_id = wanted.id OFFSET 0) AS ${alias}`

const sagaColumns = `'saga' AS kind, s.saga_id AS "sagaId", s.status, s.revision, s.digest, s.created_at AS "createdAt",
  s.updated_at AS "updatedAt", s.lease_owner AS "leaseOwner", s.lease_expires_at AS "leaseExpiresAt", NULL AS seq,
  NULL AS "stepId", NULL AS "toolName", NULL AS phase, NULL AS input, NULL AS payload, NULL AS at, NULL AS hash,
  NULL AS mac`

const entryColumns = `'entry', e.saga_id, NULL, NULL, NULL, NULL, NULL, NULL, NULL, e.seq, e.step_id, e.tool_name, e.phase, e.input,
  e.payload, e.at, e.hash, e.mac`

/** The statement's name (what the loads that arrive together are grouped by) and text; `$1` is the saga ids wanted. */
export const statement = {
  name: "effect_saga_load",
  text: `SELECT ${sagaColumns}
FROM ${byKey(sagasTable, "s")}
UNION ALL
SELECT ${entryColumns}
FROM ${byKey(entriesTable, "e")}
ORDER BY "sagaId", seq NULLS FIRST`
}

/**
 * The same rows for one saga, `$1` its id: two lookups by key with no array to unnest, which the
 * server plans in a fraction of the time (≈ 0.05 ms against 0.1–0.3 ms), the most of a load of one
 * saga at a time. Also sent unnamed.
 */
export const oneSaga = {
  name: "effect_saga_load_one",
  text: `SELECT ${sagaColumns}
FROM "${sagasTable}" AS s WHERE s.saga_id = $1
UNION ALL
SELECT ${entryColumns}
FROM "${entriesTable}" AS e WHERE e.saga_id = $1
ORDER BY seq NULLS FIRST`
}

/** The key column of the statement's rows: the saga each row belongs to. */
export const key = "sagaId"

type Row = Record<string, unknown>

const recordOf = (row: Row) => ({
  sagaId: row.sagaId,
  status: row.status,
  revision: row.revision,
  digest: row.digest,
  createdAt: row.createdAt,
  updatedAt: row.updatedAt,
  leaseOwner: row.leaseOwner,
  leaseExpiresAt: row.leaseExpiresAt
})

const entryOf = (row: Row): Row => ({
  sagaId: row.sagaId,
  seq: row.seq,
  stepId: row.stepId,
  toolName: row.toolName,
  phase: row.phase,
  input: row.input,
  payload: row.payload,
  at: row.at,
  hash: row.hash,
  mac: row.mac
})

/**
 * One saga's rows of the statement as its entries (or the first that does not decode) and its row
 * (or why it does not decode).
 */
export const decode = (sagaId: string, rows: ReadonlyArray<unknown>): Effect.Effect<ReadTogether> => {
  const own = rows as ReadonlyArray<Row>
  const stored = own[0]?.kind === "saga" ? [recordOf(own[0])] : []
  const entries = own.filter((row) => row.kind === "entry").map(entryOf)
  return Effect.map(Effect.either(decodeEntries(sagaId, entries)), (decoded) => ({
    entries: decoded,
    record: storedRow(stored)
  }))
}
