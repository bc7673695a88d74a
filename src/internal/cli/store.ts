/**
 * Where the CLI's sagas live: `--db` parsed into a store, and the `Saga`, `Journal` and
 * `Approval` services on it, as a service builds them. Read commands open the store read-only and
 * never migrate; no command opens a database that is not an effect-saga journal.
 *
 * @since 0.1.0
 */

import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import type { Approval } from "../../Approval.js"
import { Journal, JournalError } from "../../Journal.js"
import type { KeyError } from "../../Keys.js"
import * as Saga from "../../Saga.js"
import * as SqlApproval from "../../SqlApproval.js"
import * as SqlJournal from "../../SqlJournal.js"
import * as SqlStore from "../../SqlStore.js"
import { editedMigrationsRecord } from "../util/editedMigrations.js"
import { withoutSecrets } from "../util/secretUrl.js"
import { UsageError } from "./failure.js"
import * as LeaseClock from "./leaseClock.js"

/**
 * A store the CLI can be pointed at: an SQLite file, or a PostgreSQL URL.
 *
 * @since 0.1.0
 * @category models
 */
export type Store =
  | { readonly _tag: "Sqlite"; readonly filename: string }
  | { readonly _tag: "Postgres"; readonly url: string }

/**
 * Reads `--db`: `postgres://…` or `postgresql://…` is a PostgreSQL URL, another `scheme://` is
 * refused, anything else is the path of an SQLite file.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parse = (db: string): Effect.Effect<Store, UsageError> => {
  if (/^postgres(ql)?:\/\//i.test(db)) {
    return URL.canParse(db)
      ? Effect.succeed({ _tag: "Postgres", url: db })
      : Effect.fail(new UsageError({ message: "--db: not a valid postgres:// URL" }))
  }
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(db)
  if (scheme !== null) {
    return Effect.fail(
      new UsageError({
        message: `--db: ${scheme[1]}:// stores are not supported: give an SQLite file or a postgres:// URL`
      })
    )
  }
  if (db.trim() === "") return Effect.fail(new UsageError({ message: "--db: the path is empty" }))
  return Effect.succeed({ _tag: "Sqlite", filename: db })
}

/**
 * The services a command uses; `LeaseClock`, the clock `list` and `show` judge leases by.
 *
 * @since 0.1.0
 * @category models
 */
export type Services = Saga.Saga | Journal | Approval | LeaseClock.LeaseClock

/**
 * How a command uses the store:
 * - `read`: read-only, never migrated; the journal must be at this version's schema;
 * - `write`: migrated first, as a service does (a journal an earlier version made is brought up to date);
 * - `create`: as `write`, and the store may be created (`import`: a missing SQLite file, or a
 *   PostgreSQL database without effect-saga's tables).
 *
 * @since 0.2.0
 * @category models
 */
export type Access = "read" | "write" | "create"

/** A missing file is refused unless the command may create one; an empty file is no journal. */
const checkFile = (filename: string, access: Access): Effect.Effect<"exists" | "missing", UsageError> =>
  Effect.suspend(() => {
    const stat = fs.statSync(filename, { throwIfNoEntry: false })
    if (stat === undefined) {
      return access === "create"
        ? Effect.succeed("missing" as const)
        : Effect.fail(
            new UsageError({ message: `no database at ${filename} (the CLI creates none, except to import)` })
          )
    }
    if (!stat.isFile()) return Effect.fail(new UsageError({ message: `${filename} is not a file` }))
    return stat.size === 0
      ? Effect.fail(
          new UsageError({ message: `no effect-saga journal at ${filename}: the file is empty (nothing was written)` })
        )
      : Effect.succeed("exists" as const)
  })

/**
 * Refuses a store that is not an effect-saga journal (unless `create`), one whose record of
 * migrations was edited (even to create: an import would be refused by the migrations, in other
 * words), one that a newer effect-saga migrated, and, to read it, one an older version left
 * behind: reads never migrate.
 */
const checkJournal = (where: string, access: Access) =>
  Effect.flatMap(SqlJournal.schemaVersion, ({ applied: version, latest: latestMigration }) => {
    if (version === 0) {
      return Effect.fail(
        new UsageError({
          message: editedMigrationsRecord(where, "is empty or missing")
        })
      )
    }
    if (version === undefined) {
      return access === "create"
        ? Effect.void
        : Effect.fail(
            new UsageError({
              message: `no effect-saga journal at ${where}: the database has no effect-saga tables (nothing was written)`
            })
          )
    }
    if (version > latestMigration) {
      return Effect.fail(
        new UsageError({
          message: `the journal at ${where} has schema version ${version}, newer than this effect-saga's ${latestMigration}: upgrade effect-saga (nothing was written)`
        })
      )
    }
    return version < latestMigration && access === "read"
      ? Effect.fail(
          new UsageError({
            message: `the journal at ${where} has schema version ${version}, older than this effect-saga's ${latestMigration}, and read commands never migrate: run a changing command once (effect-saga prune --finished-before 1970-01-01 deletes nothing) or a service of this version on it`
          })
        )
      : Effect.void
  })

/**
 * The journal as a read command holds it: it reads, it holds no lease (so it has none to renew or
 * release), and every write is refused.
 */
const readOnlyJournal = (journal: Journal["Type"]): Journal["Type"] => {
  const refused = (operation: string) =>
    Effect.fail(new JournalError({ operation, reason: "a read command opens the store read-only" }))
  return Journal.of({
    ...journal,
    append: () => refused("append"),
    claim: () => refused("claim"),
    claimLapsed: () => refused("claim"),
    importSaga: () => refused("import"),
    prune: () => refused("prune"),
    renew: () => Effect.succeed(0),
    release: () => Effect.void
  })
}

/** The journal and approvals on the `SqlClient` in context: as they are to read, migrated to change. */
const storeOn = (access: Access): Layer.Layer<Journal | Approval, JournalError | KeyError, SqlClient.SqlClient> =>
  access === "read"
    ? Layer.merge(
        Layer.effect(Journal, Effect.map(Journal, readOnlyJournal)).pipe(Layer.provide(SqlJournal.layerUnmigrated)),
        SqlApproval.layerUnmigrated
      )
    : SqlStore.layer

/**
 * Who the CLI is in the leases it takes: a worker named as a command of the CLI, new at each
 * invocation, so that a worker or another operator refused with `LeaseHeld` reads that a command
 * holds the saga (to retry once it ends), not a service.
 */
const cliOwner = (): string =>
  `effect-saga-cli/${os.hostname()}/${process.pid}/${crypto.randomBytes(3).toString("hex")}`

/** The saga service as the CLI's worker, named anew each time it is built (its owner is always valid). */
const cliSaga = Layer.suspend(() =>
  Layer.catchAll(Saga.layerWith({ owner: cliOwner() }), (error) =>
    error._tag === "InvalidWorkerOptions" ? Layer.die(error) : Layer.fail(error)
  )
)

/** The saga service on the store in context, once `checkJournal` let it through. */
const servicesOn = (
  where: string,
  access: Access
): Layer.Layer<Services, UsageError | JournalError | KeyError, SqlClient.SqlClient> =>
  Layer.unwrapEffect(
    Effect.as(
      checkJournal(where, access),
      LeaseClock.layer.pipe(Layer.provideMerge(cliSaga.pipe(Layer.provideMerge(storeOn(access)))))
    )
  )

/** The URL without its password, for messages. */
const withoutPassword = (url: string): string => withoutSecrets(url, "the PostgreSQL URL given")

/** The URL with a session in which every transaction is read-only. */
const readOnlyUrl = (url: string): string => {
  const parsed = new URL(url)
  const options = parsed.searchParams.get("options")
  parsed.searchParams.set("options", `${options === null ? "" : `${options} `}-c default_transaction_read_only=on`)
  return parsed.toString()
}

/** Whether this process may write in `folder`. */
const writable = (folder: string): boolean => {
  try {
    fs.accessSync(folder, fs.constants.W_OK)
    return true
  } catch {
    return false
  }
}

/**
 * SQLite's refusal to open a journal in a folder it cannot write (it writes the WAL's `-wal` and
 * `-shm` files beside the journal, even to read it: `SQLITE_READONLY_DIRECTORY`, or
 * `SQLITE_CANTOPEN` where a `-wal` is there without its `-shm`), with what an operator can do.
 */
const withFolderHint =
  (filename: string) =>
  <E>(error: E): E =>
    error instanceof JournalError &&
    /SQLITE_READONLY_DIRECTORY|SQLITE_CANTOPEN/.test(error.reason) &&
    !writable(path.dirname(filename))
      ? (new JournalError({
          operation: error.operation,
          reason: `${error.reason}: SQLite writes the journal's -wal and -shm files beside it, even to read it; copy the file (with its -wal, if there is one) to a folder you can write, and read the copy`
        }) as E)
      : error

const sqliteLayer = (filename: string, access: Access): Layer.Layer<Services, UsageError | JournalError | KeyError> => {
  const client = (readonly: boolean) => SqlJournal.layerSqliteClient({ filename, readonly })
  // Looked at through a read-only connection first: opening it to write would switch the file to WAL.
  // An existing file must be a journal already, even to import into.
  const probe = Effect.provide(checkJournal(filename, access === "create" ? "write" : access), client(true))
  const layer = Layer.unwrapEffect(
    Effect.flatMap(checkFile(filename, access), (file) =>
      Effect.as(
        file === "exists" ? probe : Effect.void,
        servicesOn(filename, access).pipe(Layer.provide(client(access === "read")))
      )
    )
  )
  return access === "read" ? Layer.mapError(layer, withFolderHint(filename)) : layer
}

/** Removes an SQLite database a failed command created, with its WAL and shared-memory files. */
export const remove = (store: Extract<Store, { readonly _tag: "Sqlite" }>): Effect.Effect<void> =>
  Effect.sync(() => {
    for (const suffix of ["", "-wal", "-shm", "-journal"]) fs.rmSync(`${store.filename}${suffix}`, { force: true })
  })

/** The PostgreSQL entry, loaded only for a PostgreSQL `--db` (its driver is an optional peer). */
const postgresEntry = Effect.tryPromise({
  try: () => import("../../Postgres.js"),
  catch: (error) =>
    new JournalError({ operation: "open", reason: error instanceof Error ? error.message : String(error) })
})

const pgLayer = (url: string, access: Access): Layer.Layer<Services, UsageError | JournalError | KeyError> =>
  Layer.unwrapEffect(
    Effect.map(postgresEntry, (Postgres) =>
      servicesOn(withoutPassword(url), access).pipe(
        Layer.provide(
          Postgres.layerClient({ url: Redacted.make(access === "read" ? readOnlyUrl(url) : url), maxConnections: 2 })
        )
      )
    )
  )

/**
 * The `Saga` service, with the journal and approvals it runs on, over `store`, for `access`. An
 * SQLite file that is missing (unless `create`), empty, not a database, or a database without
 * effect-saga's tables fails before anything is written; so does a PostgreSQL database that does
 * not answer, or has no journal to read. The keys are read from the environment
 * (`EFFECT_SAGA_JOURNAL_KEYS`, `EFFECT_SAGA_RECEIPT_KEYS`) as a service's layers read them: a key
 * list that cannot be used fails with `KeyError`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (store: Store, access: Access): Layer.Layer<Services, UsageError | JournalError | KeyError> =>
  store._tag === "Postgres" ? pgLayer(store.url, access) : sqliteLayer(store.filename, access)
