/**
 * PostgreSQL: a group commit's appends to distinct sagas as one autocommitted statement whose text
 * does not depend on the batch (each column bound as one array, spread by `unnest`), so that a
 * connection parses and plans it once and runs it by name. One round trip and one WAL flush a batch.
 */
import * as Journal from "../../Journal.js"
import { entriesTable, sagasTable } from "./migrations.js"
import { storedTimeForm } from "./storedTimeForm.js"

/** What the batch statement needs of one append (the journal's own request has these fields). */
export interface BatchedAppend {
  readonly sagaId: string
  readonly expected: Journal.Expected
  /** Its entries, at least one. */
  readonly written: ReadonlyArray<Journal.Entry>
  readonly status: Journal.SagaStatus | null
  readonly at: string
  readonly holder: Journal.Holder | null
}

const active = Journal.SagaStatus.literals
  .filter(Journal.isActive)
  .map((status) => `'${status}'`)
  .join(", ")

const isoFormat = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`
const now = `to_char(now() AT TIME ZONE 'UTC', ${isoFormat})`
const after = (ttl: string) => `to_char((now() + ${ttl} * interval '1 millisecond') AT TIME ZONE 'UTC', ${isoFormat})`

/**
 * An append's lease column (the one it names, else the one there is), unless it sets a status that
 * is not active: one that sets none keeps it whatever the saga's status (an operator's command holds
 * the lease of a saga that waits, needs attention or failed to compensate until it releases it).
 */
const keptWhileActive = (value: string, current: string) =>
  `CASE WHEN COALESCE(request.status, 'running') IN (${active}) THEN COALESCE(${value}, ${current}) END`

const sagas = `"${sagasTable}"`
const entryColumns = "saga_id, seq, step_id, tool_name, phase, input, payload, at, hash, mac"

/**
 * The statement: the compare-and-set of every append whose saga row exists (`moved`: an `UPDATE`
 * that matches only while the row is where the writer last saw it and nobody else holds its lease),
 * the row of every saga that does not exist yet (`created`: a saga's first append; a row another
 * writer created meanwhile is left alone, and the append is not matched), then the entries of the
 * appends that matched. It returns one row per entry written, its saga id.
 */
const text = (unflushed: boolean) => `WITH request AS (
  SELECT * FROM unnest($1::text[], $2::text[], $3::integer[], $4::text[], $5::text[], $6::text[], $7::bigint[],
    $8::integer[], $9::text[])
    AS request (saga_id, status, revision, digest, at, owner, ttl, expected_revision, expected_digest)
), moved AS (
  UPDATE ${sagas} AS saga SET status = COALESCE(request.status, saga.status), revision = request.revision,
    digest = request.digest, updated_at = request.at,
    lease_owner = ${keptWhileActive("request.owner", "saga.lease_owner")},
    lease_expires_at = ${keptWhileActive(after("request.ttl"), "saga.lease_expires_at")}
  FROM request
  WHERE saga.saga_id = request.saga_id AND saga.revision = request.expected_revision
    AND saga.digest = request.expected_digest
    AND (saga.lease_owner IS NULL OR saga.lease_owner = request.owner
      OR (saga.lease_expires_at <= ${now} AND ${storedTimeForm(true, "saga.lease_expires_at")}))
  RETURNING saga.saga_id
), created AS (
  INSERT INTO ${sagas} (saga_id, status, revision, digest, created_at, updated_at, lease_owner, lease_expires_at)
  SELECT saga_id, COALESCE(status, 'running'), revision, digest, at, at,
    ${keptWhileActive("request.owner", "NULL")}, ${keptWhileActive(after("request.ttl"), "NULL")}
  FROM request WHERE expected_revision = 0
  ON CONFLICT (saga_id) DO NOTHING
  RETURNING saga_id
), inserted AS (
  INSERT INTO "${entriesTable}" (${entryColumns})
  SELECT * FROM unnest($10::text[], $11::integer[], $12::text[], $13::text[], $14::text[], $15::text[], $16::text[],
    $17::text[], $18::text[], $19::text[]) AS written (${entryColumns})
  WHERE written.saga_id IN (SELECT saga_id FROM moved UNION ALL SELECT saga_id FROM created)
  RETURNING saga_id
)
SELECT saga_id FROM inserted${unflushed ? ` WHERE set_config('synchronous_commit', 'off', true) = 'off'` : ""}`

/**
 * The batch statement, named; `unflushed`: its transaction commits without waiting for its WAL
 * flush (`set_config(…, true)`: for this transaction alone), for a batch of steps' `EXECUTED` only.
 */
export const statement = (unflushed: boolean) => (unflushed ? unflushedStatement : flushedStatement)

const flushedStatement = { name: "effect_saga_append_batch", text: text(false) }
const unflushedStatement = { name: "effect_saga_append_batch_unflushed", text: text(true) }

/** The statement's nineteen arguments for `batch`: nine arrays of one element an append, ten of one an entry. */
export const parameters = (batch: ReadonlyArray<BatchedAppend>): ReadonlyArray<ReadonlyArray<unknown>> => {
  const appends = batch.map(({ at, expected, holder, sagaId, status, written }) => {
    const last = written[written.length - 1]!
    const lease = [holder?.owner ?? null, holder?.ttlMillis ?? null]
    return [sagaId, status, last.seq, last.hash, at, ...lease, expected.revision, expected.digest]
  })
  const entries = batch.flatMap(({ written }) =>
    written.map((entry) => [
      ...[entry.sagaId, entry.seq, entry.stepId, entry.toolName, entry.phase],
      ...[entry.input, entry.payload, entry.at, entry.hash, entry.mac ?? null]
    ])
  )
  return [...columnsOf(appends, 9), ...columnsOf(entries, 10)]
}

/** `rows` (each of `width` values) as `width` arrays, one a column. */
const columnsOf = (rows: ReadonlyArray<ReadonlyArray<unknown>>, width: number) =>
  Array.from({ length: width }, (_, column) => rows.map((row) => row[column]))

/** Entries written by saga, from the statement's rows. */
export const writtenBySaga = (rows: ReadonlyArray<unknown>): Map<string, number> => {
  const counts = new Map<string, number>()
  for (const row of rows) {
    const sagaId = (row as { readonly saga_id: string }).saga_id
    counts.set(sagaId, (counts.get(sagaId) ?? 0) + 1)
  }
  return counts
}
