import type * as SqlClient from "@effect/sql/SqlClient"
import type * as PgClient from "@effect/sql-pg/PgClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { JournalError } from "../../Journal.js"
import type { PgOptions } from "../../SqlJournal.js"
import { describeFailure } from "./sqlite.js"

/** The URL without its password, for messages. */
const printable = (url: Redacted.Redacted<string>): string => {
  try {
    const parsed = new URL(Redacted.value(url))
    if (parsed.password !== "") parsed.password = "***"
    return parsed.toString()
  } catch {
    return "an unreadable URL"
  }
}

/**
 * A `PgClient` on `options.url`. The driver is loaded here, not at import, so that an SQLite
 * deployment never loads it; a server that cannot be reached fails with a `JournalError` for `open`.
 */
export const layerClient = (options: PgOptions): Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, JournalError> => {
  const url = Redacted.isRedacted(options.url) ? options.url : Redacted.make(options.url)
  const opened = (error: unknown) =>
    new JournalError({ operation: "open", reason: `${printable(url)}: ${describeFailure(error)}` })
  return Layer.unwrapEffect(
    Effect.map(Effect.tryPromise({ try: () => import("@effect/sql-pg/PgClient"), catch: opened }), (driver) =>
      driver
        .layer({ url, maxConnections: options.maxConnections ?? 10, applicationName: "effect-saga" })
        .pipe(Layer.mapError(opened))
    )
  )
}
