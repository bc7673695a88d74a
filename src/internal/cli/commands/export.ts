/**
 * `effect-saga export SAGA`: a saga's journal as NDJSON on stdout.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as Effect from "effect/Effect"
import * as Journal from "../../../Journal.js"
import { print } from "../output.js"
import { db, saga, withStore } from "../root.js"

/**
 * The `export` command.
 *
 * @since 0.1.0
 * @category commands
 */
export const exportSaga = Command.make("export", { db, saga }, (options) =>
  withStore(
    options.db,
    Effect.flatMap(Journal.exportNdjson(options.saga), (ndjson) => print(ndjson.replace(/\n$/, ""))),
    { access: "read" }
  )
).pipe(
  Command.withDescription(
    "Print a saga's journal as NDJSON, one entry per line in seq order, every field as stored (hashes included), then an end line naming the saga, its number of entries and its last hash."
  )
)
