/**
 * The SQLite client the store opens: `@effect/sql-sqlite-node`'s `SqliteClient.make`, rebuilt on a
 * better-sqlite3 connection of its own, so that the journal can run a whole append synchronously on
 * that same connection, under the same lock as every other statement (`Direct`). One connection, one
 * lock: no second writer in the process, nothing to deadlock on.
 */
import { createRequire } from "node:module"
import type * as Reactivity from "@effect/experimental/Reactivity"
import * as Client from "@effect/sql/SqlClient"
import type { Connection } from "@effect/sql/SqlConnection"
import { SqlError } from "@effect/sql/SqlError"
import * as Statement from "@effect/sql/Statement"
import type * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Scope from "effect/Scope"
import { Mutex } from "../util/mutex.js"

/** What the client uses of a better-sqlite3 statement. */
interface PreparedStatement {
  readonly reader: boolean
  readonly run: (...params: ReadonlyArray<unknown>) => unknown
  readonly all: (...params: ReadonlyArray<unknown>) => Array<unknown>
  readonly raw: (raw: boolean) => unknown
  readonly safeIntegers: (on: boolean) => unknown
}

/** What the client uses of a better-sqlite3 connection. */
interface Database {
  readonly inTransaction: boolean
  readonly prepare: (sql: string) => PreparedStatement
  readonly pragma: (pragma: string, options?: { readonly simple: boolean }) => unknown
  readonly close: () => unknown
  readonly serialize: () => Uint8Array
  readonly backup: (destination: string) => Promise<SqliteClient.BackupMetadata>
  readonly loadExtension: (path: string) => unknown
}

/** The connection, for code that runs its statements synchronously (the journal's appends). */
export interface Direct {
  /** `f` on the connection while holding it: no other statement of the client runs meanwhile. */
  readonly exclusive: <A>(f: () => A) => Effect.Effect<A, SqlError>
  /** Runs `sql` (prepared once, cached as the client's own statements are): its rows, if it returns any. */
  readonly run: (sql: string, params: ReadonlyArray<unknown>) => ReadonlyArray<unknown>
  /** Whether a transaction is open on the connection. */
  readonly inTransaction: () => boolean
  /**
   * Whether nobody holds the connection or waits for it and no transaction is open on it: then a
   * synchronous call may use it at once (nothing can come between its statements).
   */
  readonly idle: () => boolean
}

const direct = new WeakMap<object, Direct>()

/**
 * `sql` with `params` on `connection` at once, in the caller's fiber, if there is one and it is
 * idle; else `otherwise` (the same statement through the client, which waits for the connection or
 * runs inside the caller's own transaction).
 */
export const runWhenIdle = <E>(
  connection: Direct | undefined,
  sql: string,
  params: ReadonlyArray<unknown>,
  otherwise: Effect.Effect<ReadonlyArray<unknown>, E>
): Effect.Effect<ReadonlyArray<unknown>, E | SqlError> =>
  connection === undefined
    ? otherwise
    : Effect.suspend(
        (): Effect.Effect<ReadonlyArray<unknown>, E | SqlError> =>
          connection.idle()
            ? Effect.try({ try: () => connection.run(sql, params), catch: failure("Failed to execute statement") })
            : otherwise
      )

/** The connection of `client`, if this module opened it (a client of the user's own has none). */
export const directOf = (client: object): Direct | undefined => direct.get(client)

/** Statements kept prepared, the least recently used dropped first (the stock client keeps 200). */
const PREPARED_CAPACITY = 200

const failure = (message: string) => (cause: unknown) => new SqlError({ cause, message })

/** better-sqlite3, the copy `@effect/sql-sqlite-node` itself loads (not necessarily a dependency of ours). */
const loadDriver = (): (new (filename: string, options: { readonly readonly: boolean }) => Database) => {
  const driverPackage = createRequire(import.meta.url).resolve("@effect/sql-sqlite-node/package.json")
  return createRequire(driverPackage)("better-sqlite3")
}

const makePrepared = (db: Database) => {
  const cache = new Map<string, PreparedStatement>()
  return (sql: string): PreparedStatement => {
    let statement = cache.get(sql)
    if (statement === undefined) {
      statement = db.prepare(sql)
      if (cache.size >= PREPARED_CAPACITY) cache.delete(cache.keys().next().value!)
    } else {
      cache.delete(sql)
    }
    cache.set(sql, statement)
    return statement
  }
}

const makeConnection = (db: Database, prepare: (sql: string) => PreparedStatement): Connection => {
  const runStatement = (statement: () => PreparedStatement, params: ReadonlyArray<unknown>, raw: boolean) =>
    Effect.withFiberRuntime<ReadonlyArray<any>, SqlError>((fiber) =>
      Effect.try({
        try: () => {
          const prepared = statement()
          if (Context.get(fiber.currentContext, Client.SafeIntegers)) prepared.safeIntegers(true)
          if (prepared.reader) return prepared.all(...params)
          const result = prepared.run(...params)
          return raw ? (result as ReadonlyArray<any>) : []
        },
        catch: failure("Failed to execute statement")
      })
    )
  const withRows =
    (transformRows: (<A extends object>(rows: ReadonlyArray<A>) => ReadonlyArray<A>) | undefined) =>
    (effect: Effect.Effect<ReadonlyArray<any>, SqlError>) =>
      transformRows === undefined ? effect : Effect.map(effect, transformRows)
  return {
    execute: (sql, params, transformRows) => withRows(transformRows)(runStatement(() => prepare(sql), params, false)),
    executeRaw: (sql, params) => runStatement(() => prepare(sql), params, true),
    executeValues: (sql, params) =>
      Effect.try({
        try: () => {
          const statement = prepare(sql)
          if (!statement.reader) {
            statement.run(...params)
            return []
          }
          statement.raw(true)
          try {
            return statement.all(...params) as Array<ReadonlyArray<unknown>>
          } finally {
            statement.raw(false)
          }
        },
        catch: failure("Failed to execute statement")
      }),
    executeUnprepared: (sql, params, transformRows) =>
      withRows(transformRows)(runStatement(() => db.prepare(sql), params, false)),
    executeStream: () => Effect.dieMessage("executeStream not implemented")
  }
}

/** `SqliteClient.make`'s options that the store uses. */
export interface DriverOptions {
  readonly filename: string
  readonly readonly: boolean
  readonly disableWAL: boolean
}

/** How long switching a new file to WAL waits for other processes opening it at the same moment. */
const WAL_SWITCH_WAIT_MS = 5_000

/**
 * Switches the file to WAL. Processes that open a new file at the same moment race for the switch,
 * and SQLite answers the losers `SQLITE_BUSY` at once, without its busy handler: each tries again
 * every 20 ms for `WAL_SWITCH_WAIT_MS` (a blocking wait: this runs once, as the store opens).
 */
const toWal = (db: { readonly pragma: (pragma: string) => unknown }): void => {
  const deadline = Date.now() + WAL_SWITCH_WAIT_MS
  for (;;) {
    try {
      db.pragma("journal_mode = WAL")
      return
    } catch (error) {
      const busy = String((error as { readonly code?: unknown }).code ?? "").startsWith("SQLITE_BUSY")
      if (!busy || Date.now() > deadline) throw error
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20)
    }
  }
}

/** For each client that switched its file to WAL: switching it back to the mode it had before. */
const walSwitches = new WeakMap<object, Effect.Effect<void>>()

/**
 * Switches the file of `client` back to the journal mode it had before the client switched it to
 * WAL, if it did (a migration that fails leaves the file as it was). Best effort: while another
 * connection has the file open in WAL mode, SQLite refuses, and the file stays in WAL mode.
 */
export const undoWalSwitch = (client: object): Effect.Effect<void> => walSwitches.get(client) ?? Effect.void

/** Forgets how to switch the file of `client` back (its migrations succeeded). */
export const keepWal = (client: object): void => {
  walSwitches.delete(client)
}

/**
 * An `SqliteClient` on `options.filename`, as `@effect/sql-sqlite-node` makes it (WAL unless
 * disabled, one connection behind a lock, statements prepared once), whose connection the journal
 * reaches through `directOf`. Dies when the file cannot be opened, as the stock one does. `TypeId`
 * is the stock module's, so that the client is one to `@effect/sql-sqlite-node` too.
 */
export const make = (
  options: DriverOptions,
  TypeId: SqliteClient.TypeId
): Effect.Effect<SqliteClient.SqliteClient, never, Scope.Scope | Reactivity.Reactivity> =>
  Effect.gen(function* () {
    const Sqlite = loadDriver()
    const db = yield* Effect.acquireRelease(
      Effect.sync(() => new Sqlite(options.filename, { readonly: options.readonly })),
      (db) => Effect.sync(() => db.close())
    )
    const modeBefore = options.disableWAL ? "wal" : String(db.pragma("journal_mode", { simple: true }))
    if (!options.disableWAL) toWal(db)
    const prepare = makePrepared(db)
    const connection = makeConnection(db, prepare)
    const lock = new Mutex()
    const acquirer = lock.withLock(Effect.succeed(connection))
    const unlock = Effect.sync(() => lock.unlock())
    const transactionAcquirer = Effect.uninterruptibleMask((restore) =>
      Effect.as(
        Effect.zipRight(
          restore(lock.lock()),
          Effect.tap(Effect.scope, (scope) => Scope.addFinalizer(scope, unlock))
        ),
        connection
      )
    )
    const client = yield* Client.make({
      acquirer,
      compiler: Statement.makeCompilerSqlite(),
      transactionAcquirer,
      spanAttributes: [["db.system.name", "sqlite"]]
    })
    const onConnection = <A>(f: () => A, message: string) =>
      Effect.flatMap(acquirer, () => Effect.try({ try: f, catch: failure(message) }))
    const sqlite = Object.assign(client, {
      [TypeId]: TypeId,
      config: { filename: options.filename, readonly: options.readonly, disableWAL: options.disableWAL },
      export: onConnection(() => db.serialize(), "Failed to export database"),
      backup: (destination: string) =>
        Effect.flatMap(acquirer, () =>
          Effect.tryPromise({ try: () => db.backup(destination), catch: failure("Failed to backup database") })
        ),
      loadExtension: (path: string) => onConnection(() => void db.loadExtension(path), "Failed to load extension")
    }) as unknown as SqliteClient.SqliteClient
    if (modeBefore !== "wal") {
      const switchBack = Effect.sync(() => {
        try {
          db.pragma(`journal_mode = ${modeBefore}`)
        } catch {
          // Another connection has the file open in WAL mode: it stays so.
        }
      })
      walSwitches.set(sqlite, lock.withLock(switchBack))
    }
    direct.set(sqlite, {
      exclusive: (f) => lock.withLock(Effect.try({ try: f, catch: failure("Failed to execute statement") })),
      run: (sql, params) => {
        const statement = prepare(sql)
        if (statement.reader) return statement.all(...params)
        statement.run(...params)
        return []
      },
      inTransaction: () => db.inTransaction,
      idle: () => lock.idle && !db.inTransaction
    })
    return sqlite
  })
