/**
 * `effect-saga export SAGA`: a saga's journal as NDJSON on stdout; for a journal whose entries do
 * not all decode, its entries as stored, for forensics, and no end line.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as Effect from "effect/Effect"
import * as Journal from "../../../Journal.js"
import { printable } from "../../util/printable.js"
import { SomethingWrong } from "../failure.js"
import { print } from "../output.js"
import { db, saga, withStore } from "../root.js"
import { jsonValue } from "../storedColumns.js"

/** A stored entry as one line, shaped as an export's entry line (no `mac` when the column is NULL). */
const storedLine = (stored: Journal.StoredEntry): string => {
  const { mac, ...columns } = stored
  const line: Record<string, unknown> = {}
  for (const [column, value] of Object.entries(mac === null ? columns : stored)) line[column] = jsonValue(value)
  return JSON.stringify(line)
}

/** Why the journal is not exported, in the words of `verify`. */
const whyRefused = (refused: Journal.JournalCorrupted | Journal.JournalTampered): string =>
  refused._tag === "JournalCorrupted"
    ? refused.message
    : `journal of saga ${refused.sagaId} does not verify at seq ${refused.seq} (${refused.problem}): ${refused.reason}`

/**
 * The journal does not verify (an entry does not decode, or the chain breaks): every entry as
 * stored, one line each and no end line (`import` refuses it), and on stderr why; exit 1, as a
 * tampered saga's.
 */
const exportStored = (refused: Journal.JournalCorrupted | Journal.JournalTampered) =>
  Effect.flatMap(Journal.storedEntries(refused.sagaId), (stored) =>
    Effect.zipRight(
      print(stored.map(storedLine).join("\n")),
      Effect.fail(
        new SomethingWrong({
          reason: `saga ${refused.sagaId} is tampered`,
          line: printable(`${whyRefused(refused)}; its entries printed as stored, no end line: not an export`)
        })
      )
    )
  )

/**
 * The `export` command.
 *
 * @since 0.1.0
 * @category commands
 */
export const exportSaga = Command.make("export", { db, saga }, (options) =>
  withStore(
    options.db,
    Journal.exportNdjson(options.saga).pipe(
      Effect.flatMap((ndjson) => print(ndjson.replace(/\n$/, ""))),
      Effect.catchTags({ JournalCorrupted: exportStored, JournalTampered: exportStored })
    ),
    { access: "read" }
  )
).pipe(
  Command.withDescription(
    "Print a saga's journal as NDJSON, one entry per line in seq order, every field as stored (hashes included), then an end line naming the saga, its number of entries and its last hash. If the journal does not verify (an entry no longer decodes, or the hash chain breaks or does not end where the saga's row says), print every entry as stored instead, with no end line (not an export: import refuses it), say why on stderr and exit 1."
  )
)
