import * as Reactivity from "@effect/experimental/Reactivity"
import * as SqlClient from "@effect/sql/SqlClient"
import type { Connection } from "@effect/sql/SqlConnection"
import type { SqlError } from "@effect/sql/SqlError"
import type * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberRef from "effect/FiberRef"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import type * as Scope from "effect/Scope"
import { JournalError } from "../../Journal.js"
import type { KeyError } from "../../Keys.js"
import { isKeyError } from "../../Keys.js"
import * as HeldBack from "../journal/heldBack.js"
import * as SqliteDriver from "./sqliteDriver.js"
import * as Unflushed from "./unflushed.js"

/** How to open the SQLite file; `readonly` (internal, the CLI's reads): nothing can be written. */
export interface SqliteOptions {
  readonly filename: string
  readonly busyTimeout?: Duration.DurationInput | undefined
  readonly synchronous?: "full" | "normal" | undefined
  readonly flushEveryEntry?: boolean | undefined
  readonly readonly?: boolean | undefined
}

/** How long a write waits for another connection's lock before it fails, unless told otherwise. */
export const defaultBusyTimeout: Duration.DurationInput = "5 seconds"

const codeOf = (cause: unknown): string | undefined =>
  Predicate.hasProperty(cause, "code") && typeof cause.code === "string" ? cause.code : undefined

const messageOf = (cause: unknown): string =>
  cause instanceof Error
    ? cause.message
    : Predicate.hasProperty(cause, "message")
      ? String(cause.message)
      : String(cause)

/** The driver's error behind a store failure (`SqlError` and `MigrationError` wrap it in `cause`). */
const rootCause = (error: unknown): unknown => {
  let cause = error
  while (
    (Predicate.isTagged(cause, "SqlError") || Predicate.isTagged(cause, "MigrationError")) &&
    Predicate.hasProperty(cause, "cause") &&
    cause.cause !== undefined
  ) {
    cause = cause.cause
  }
  return cause
}

/** Whether a store failure is a unique-key violation (SQLite or PostgreSQL). */
export const isUniqueViolation = (error: unknown): boolean => {
  const code = codeOf(rootCause(error))
  return code === "SQLITE_CONSTRAINT_PRIMARYKEY" || code === "SQLITE_CONSTRAINT_UNIQUE" || code === "23505"
}

/** Whether a store failure is another connection's lock, held past the busy timeout. */
export const isLocked = (error: unknown): boolean => {
  const code = codeOf(rootCause(error))
  return code?.startsWith("SQLITE_BUSY") === true || code?.startsWith("SQLITE_LOCKED") === true
}

/**
 * A connection that broke or a server that went away under a statement: PostgreSQL's codes
 * (SQLSTATE), and the socket's.
 */
const connectionBroke = new Set(["08000", "08003", "08006", "08007", "57P01", "57P02", "ECONNRESET", "EPIPE"])
/** Codes of a connection that was never made: nothing was sent. */
const neverConnected = new Set(["08001", "08004", "57P03", "ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN"])
const isServerCode = (code: string) => /^[0-9A-Z]{5}$/.test(code)

/**
 * Whether a failed write may have committed all the same: the connection was lost after the
 * statement (or its `COMMIT`) was sent, so that the server may have committed it unheard. Not so
 * for an error the server answered (a unique key, a serialization failure, a lock or statement
 * timeout, a syntax error: the transaction rolled back), for SQLite's errors (its writes are
 * local, and a failed `COMMIT` rolls back), nor for a connection that was never made.
 */
export const leavesOutcomeUnknown = (error: unknown): boolean => {
  if (neverReachedServer(error)) return false
  const code = codeOf(rootCause(error))
  if (code === undefined || connectionBroke.has(code)) return true
  return !(code.startsWith("SQLITE_") || isServerCode(code))
}

/** Whether a store failure is a connection that was never made: the operation sent nothing. */
export const neverReachedServer = (error: unknown): boolean => {
  const cause = rootCause(error)
  const code = codeOf(cause)
  return code === undefined ? /trying to connect|connection timeout/i.test(messageOf(cause)) : neverConnected.has(code)
}

/** Says in words why a store operation failed, naming the driver's code where there is one. */
export const describeFailure = (error: unknown): string => {
  const cause = rootCause(error)
  const code = codeOf(cause)
  const detail = code === undefined ? messageOf(cause) : `${code}: ${messageOf(cause)}`
  const has = (prefix: string) => code?.startsWith(prefix) === true
  if (isLocked(cause)) {
    return `the database is locked: another connection held it longer than the busy timeout (${detail})`
  }
  if (has("SQLITE_READONLY")) return `the database is read-only (${detail})`
  if (code === "SQLITE_NOTADB") return `the file is not an SQLite database (${detail})`
  if (has("SQLITE_CORRUPT")) return `the database file is corrupt (${detail})`
  if (has("SQLITE_FULL")) return `the disk is full (${detail})`
  if (has("SQLITE_CANTOPEN")) return `the database file cannot be opened (${detail})`
  if (has("SQLITE_IOERR")) return `the database file cannot be read or written (${detail})`
  return detail
}

/** A `JournalError` for `operation` that says why the store failed (a `JournalError` passes as it is). */
export const journalError =
  (operation: string) =>
  (error: unknown): JournalError =>
    error instanceof JournalError ? error : new JournalError({ operation, reason: describeFailure(error) })

/** A store's layer failing: a bad key list stays a `KeyError`, anything else is a `JournalError` of `operation`. */
export const layerError =
  (operation: string) =>
  (error: unknown): JournalError | KeyError =>
    isKeyError(error)
      ? error
      : operation === "migrate" && isLocked(error)
        ? lockedAtOpen(error)
        : journalError(operation)(error)

/**
 * A store that another connection held locked while a layer opened it: the layer checks (and
 * migrates if need be) its schema before anything else, which is what waited, not a migration the
 * caller asked for.
 */
const lockedAtOpen = (error: unknown) =>
  new JournalError({
    operation: "open",
    reason: `${describeFailure(error)}: its schema is checked (and migrated if need be) before anything is read or written; nothing was written`
  })

const isNoTransaction = (error: SqlError) => /no transaction is active/i.test(messageOf(rootCause(error)))

/** `effect` between `BEGIN IMMEDIATE` and `COMMIT` on `conn`, rolled back if it or the commit fails. */
const inTransaction = <A, E, R>(
  conn: Connection,
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, E | SqlError, R> => {
  // Prepared once and cached by the connection, as any other statement.
  const rollback = Effect.catchAll(conn.execute("ROLLBACK", [], undefined), (error) =>
    isNoTransaction(error) ? Effect.void : Effect.die(error)
  )
  return conn.execute("BEGIN IMMEDIATE", [], undefined).pipe(
    Effect.zipRight(Effect.exit(Effect.provideService(effect, SqlClient.TransactionConnection, [conn, 0] as const))),
    Effect.flatMap(
      (exit): Effect.Effect<A, E | SqlError> =>
        Exit.isSuccess(exit)
          ? Effect.as(
              Effect.tapError(conn.execute("COMMIT", [], undefined), () => rollback),
              exit.value
            )
          : Effect.zipRight(rollback, exit)
    )
  )
}

/** `effect` inside a transaction already open on `conn`, as a savepoint at `depth + 1`. */
const inSavepoint = <A, E, R>(
  [conn, depth]: readonly [Connection, number],
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, E | SqlError, R> => {
  const savepoint = `effect_sql_${depth + 1}`
  return conn.executeUnprepared(`SAVEPOINT ${savepoint}`, [], undefined).pipe(
    Effect.zipRight(
      Effect.exit(Effect.provideService(effect, SqlClient.TransactionConnection, [conn, depth + 1] as const))
    ),
    Effect.tap((exit) =>
      Exit.isFailure(exit)
        ? Effect.orDie(conn.executeUnprepared(`ROLLBACK TO SAVEPOINT ${savepoint}`, [], undefined))
        : Effect.void
    ),
    Effect.tap(() => conn.executeUnprepared(`RELEASE SAVEPOINT ${savepoint}`, [], undefined)),
    Effect.flatten
  )
}

/**
 * A transaction on `conn` that commits under `PRAGMA synchronous = NORMAL` (WAL: no flush), the
 * connection back to `FULL` after it, before anyone else can use it: the next `FULL` commit syncs
 * the WAL file, and with it the frames this one wrote.
 */
const unflushedTransaction = <A, E, R>(
  conn: Connection,
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, E | SqlError, R> =>
  Effect.zipRight(
    conn.execute("PRAGMA synchronous = NORMAL", [], undefined),
    Effect.ensuring(inTransaction(conn, effect), Effect.orDie(conn.execute("PRAGMA synchronous = FULL", [], undefined)))
  )

/**
 * `withTransaction` for SQLite that takes the write lock up front (`BEGIN IMMEDIATE`), so a second
 * writer waits for the busy timeout at the start instead of failing half-way through. Unlike the
 * stock one, a `BEGIN` or `COMMIT` that fails is a typed `SqlError`, never a defect. Under
 * `Unflushed.currentCommitUnflushed` (set by the journal, only on a client that allows it) the
 * commit does not wait for its flush.
 */
const immediateTransaction =
  (reserve: Effect.Effect<Connection, SqlError, Scope.Scope>) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | SqlError, R> =>
    Effect.uninterruptibleMask((restore) =>
      Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (outer) =>
        Option.isSome(outer)
          ? inSavepoint(outer.value, restore(effect))
          : Effect.flatMap(FiberRef.get(Unflushed.currentCommitUnflushed), (unflushed) =>
              Effect.scoped(
                Effect.flatMap(reserve, (conn) =>
                  unflushed ? unflushedTransaction(conn, restore(effect)) : inTransaction(conn, restore(effect))
                )
              )
            )
      )
    )

const shown = (value: unknown): string =>
  typeof value === "string" ? JSON.stringify(value) : Array.isArray(value) ? JSON.stringify(value) : String(value)

/** Why `options` cannot open a file (JavaScript callers, or `as any`), `undefined` when they can. */
const optionsProblem = (options: SqliteOptions): string | undefined => {
  if (!Predicate.isRecord(options)) return `the SQLite options must be an object, not ${String(options)}`
  const { busyTimeout, filename, flushEveryEntry, readonly, synchronous } = options
  if (typeof filename !== "string" || filename === "") return "the SQLite option filename must be a non-empty path"
  if (synchronous !== undefined && synchronous !== "full" && synchronous !== "normal") {
    return `the SQLite option synchronous must be "full" or "normal", not ${shown(synchronous)}`
  }
  for (const [name, value] of [
    ["flushEveryEntry", flushEveryEntry],
    ["readonly", readonly]
  ] as const) {
    if (value !== undefined && typeof value !== "boolean") {
      return `the SQLite option ${name} must be true or false, not ${shown(value)}`
    }
  }
  if (busyTimeout === undefined) return undefined
  const timeout = Duration.decodeUnknown(busyTimeout)
  if (Option.isNone(timeout) || !Duration.isFinite(timeout.value) || negative(busyTimeout)) {
    return `the SQLite option busyTimeout must be a finite duration of 0 or more, not ${shown(busyTimeout)}`
  }
  return Duration.toMillis(timeout.value) > MAX_BUSY_TIMEOUT_MS
    ? `the SQLite option busyTimeout must be at most ${MAX_BUSY_TIMEOUT_MS} ms (about 24.8 days, the longest SQLite waits), not ${shown(busyTimeout)}`
    : undefined
}

/** The longest busy timeout SQLite takes: a longer one reads as 0 (no wait at all). */
const MAX_BUSY_TIMEOUT_MS = 2 ** 31 - 1

/** Whether a duration's input is below zero (or not a number), which `Duration` would read as zero. */
const negative = (input: unknown): boolean => {
  if (typeof input === "number") return !(input >= 0)
  if (typeof input === "bigint") return input < 0n
  if (typeof input === "string") return input.trim().startsWith("-")
  if (Array.isArray(input)) return input.some((part) => !(part >= 0))
  return false
}

/**
 * An `SqliteClient` on `filename`: WAL, the busy timeout, write transactions that begin `IMMEDIATE`
 * (or, `readonly`, a connection that cannot write). A file that cannot be opened fails with a
 * `JournalError` for `open` instead of a defect.
 */
export const layerClient = (
  options: SqliteOptions
): Layer.Layer<SqliteClient.SqliteClient | SqlClient.SqlClient, JournalError> =>
  Layer.scopedContext(
    Effect.gen(function* () {
      const refused = optionsProblem(options)
      if (refused !== undefined) return yield* new JournalError({ operation: "open", reason: refused })
      const opened = (error: unknown) =>
        new JournalError({ operation: "open", reason: `${options.filename}: ${describeFailure(error)}` })
      // Loaded here, not at import, so that importing the library never loads the native driver.
      const driver = yield* Effect.tryPromise({
        try: () => import("@effect/sql-sqlite-node/SqliteClient"),
        catch: (error) =>
          new JournalError({
            operation: "open",
            reason: `the SQLite driver cannot be loaded: ${describeFailure(error)}`
          })
      })
      // The driver throws (a defect) when the file cannot be opened or switched to WAL. A read-only
      // connection leaves the journal mode as the file has it.
      const readonly = options.readonly === true
      const client = yield* SqliteDriver.make(
        { filename: options.filename, readonly, disableWAL: readonly },
        driver.TypeId
      ).pipe(Effect.catchAllDefect((defect) => Effect.fail(opened(defect))))
      const busyTimeout = Duration.toMillis(Duration.decode(options.busyTimeout ?? defaultBusyTimeout))
      yield* Effect.mapError(client.unsafe(`PRAGMA busy_timeout = ${Math.max(0, Math.round(busyTimeout))}`), opened)
      yield* Effect.mapError(
        client.unsafe(`PRAGMA synchronous = ${options.synchronous === "normal" ? "NORMAL" : "FULL"}`),
        opened
      )
      // What `prune` deletes (receipts in plain text, without receipt keys) is written over in the
      // file, not left in its free pages.
      if (!readonly) yield* Effect.mapError(client.unsafe("PRAGMA secure_delete = ON"), opened)
      // A file that is not a database fails here, typed, even if opening it did not notice.
      yield* Effect.mapError(client`SELECT count(*) AS n FROM sqlite_master`, opened)
      Object.assign(client, { withTransaction: immediateTransaction(client.reserve) })
      // Only a `FULL` connection has flushes to skip; `flushEveryEntry` keeps every one.
      if (!readonly && options.synchronous !== "normal" && options.flushEveryEntry !== true) Unflushed.allow(client)
      // A step's `EXECUTED` travels with the saga's next append, unless every entry is to be flushed.
      if (!readonly && options.flushEveryEntry !== true) HeldBack.allowOn(client)
      return Context.make(driver.SqliteClient, client).pipe(Context.add(SqlClient.SqlClient, client))
    })
  ).pipe(Layer.provide(Reactivity.layer))
