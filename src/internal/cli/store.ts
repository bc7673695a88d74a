/**
 * Where the CLI's sagas live: `--db` parsed into a store, and the `Saga`, `Journal` and
 * `Approval` services on it, exactly as a service builds them.
 *
 * @since 0.1.0
 */

import * as fs from "node:fs"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import type { Approval } from "../../Approval.js"
import type { Journal, JournalError } from "../../Journal.js"
import type { KeyError } from "../../Keys.js"
import * as Saga from "../../Saga.js"
import * as SqlApproval from "../../SqlApproval.js"
import { UsageError } from "./failure.js"

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
  if (/^postgres(ql)?:\/\//i.test(db)) return Effect.succeed({ _tag: "Postgres", url: db })
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
 * The services a command uses.
 *
 * @since 0.1.0
 * @category models
 */
export type Services = Saga.Saga | Journal | Approval

/**
 * Whether a command may create the database when the file does not exist (only `import` may).
 *
 * @since 0.1.0
 * @category models
 */
export interface OpenOptions {
  readonly create: boolean
}

const checkFile = (filename: string, options: OpenOptions): Effect.Effect<void, UsageError> =>
  Effect.suspend(() => {
    const stat = fs.statSync(filename, { throwIfNoEntry: false })
    if (stat === undefined) {
      return options.create
        ? Effect.void
        : Effect.fail(
            new UsageError({ message: `no database at ${filename} (the CLI creates none, except to import)` })
          )
    }
    return stat.isFile() ? Effect.void : Effect.fail(new UsageError({ message: `${filename} is not a file` }))
  })

/**
 * The `Saga` service, with the journal and approvals it runs on, over `store`: an SQLite file
 * (missing, unless `create`, not a database or unreadable: it fails before anything is read or
 * written), or a PostgreSQL database (unreachable: the same). The receipt keys are read from the
 * environment (`EFFECT_SAGA_RECEIPT_KEYS`) as a service's `Saga.layer` reads them: a key list that
 * cannot be used fails with `KeyError`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  store: Store,
  options: OpenOptions
): Layer.Layer<Services, UsageError | JournalError | KeyError> =>
  store._tag === "Postgres"
    ? Saga.layer.pipe(Layer.provideMerge(SqlApproval.layerPg({ url: Redacted.make(store.url), maxConnections: 2 })))
    : Layer.unwrapEffect(
        Effect.as(
          checkFile(store.filename, options),
          Saga.layer.pipe(Layer.provideMerge(SqlApproval.layerSqlite({ filename: store.filename })))
        )
      )
