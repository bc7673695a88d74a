import * as SqlClient from "@effect/sql/SqlClient"
import type * as PgClient from "@effect/sql-pg/PgClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { JournalError } from "../../Journal.js"
import type { Options } from "../../Postgres.js"
import * as OptionalPeer from "../util/optionalPeer.js"
import { describeFailure } from "./sqlite.js"
import * as Unflushed from "./unflushed.js"

/** What `effect-saga/postgres` needs beside the core peers, as the README states it. */
export const peer: OptionalPeer.Peer = {
  entry: "effect-saga/postgres",
  install: "@effect/sql-pg@^0.53.0 pg@^8.16.3"
}

// Loaded when `effect-saga/postgres` is imported: a missing driver is one line naming what to
// install, at the import, rather than a resolution stack or a failure at the first connection.
const driver = await OptionalPeer.load(peer, () => import("@effect/sql-pg/PgClient"))

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

/** A `PgClient` on `options.url`; a server that cannot be reached fails with a `JournalError` for `open`. */
export const layerClient = (options: Options): Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, JournalError> => {
  const url = Redacted.isRedacted(options.url) ? options.url : Redacted.make(options.url)
  return driver.layer({ url, maxConnections: options.maxConnections ?? 10, applicationName: "effect-saga" }).pipe(
    Layer.tap((context) =>
      Effect.sync(() => {
        if (options.flushEveryEntry !== true) Unflushed.allow(Context.get(context, SqlClient.SqlClient))
      })
    ),
    Layer.mapError(
      (error) => new JournalError({ operation: "open", reason: `${printable(url)}: ${describeFailure(error)}` })
    )
  )
}
