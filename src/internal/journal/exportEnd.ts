/**
 * The last line of an NDJSON export, `{"exportEnd":{"sagaId":…,"entries":…,"digest":…}}`: what the
 * export holds. A file cut at a line boundary (a copy interrupted, a disk that filled up) still
 * decodes and its chain still verifies; without this line it would import as a saga that stopped
 * early, and a resume would run again the steps the lost lines recorded as done.
 */
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import type { Entry } from "../../Journal.js"

const ExportEnd = Schema.Struct({
  exportEnd: Schema.Struct({
    sagaId: Schema.String,
    entries: Schema.Int,
    digest: Schema.String
  })
})

/** What an export's end line says. */
export type ExportEnd = typeof ExportEnd.Type

const decodeEnd = Schema.decodeUnknownEither(Schema.parseJson(ExportEnd), { onExcessProperty: "error" })

const decodeLooseEnd = Schema.decodeUnknownEither(Schema.parseJson(ExportEnd))

/** The end line of an export of `entries` (one saga's, in `seq` order, at least one). */
export const endLineOf = (entries: ReadonlyArray<Entry>): string =>
  JSON.stringify(
    ExportEnd.make({
      exportEnd: { sagaId: entries[0]!.sagaId, entries: entries.length, digest: entries.at(-1)!.hash }
    })
  )

/** The end a line holds, if it is an end line (with no field an end line does not have). */
export const endOf = (line: string): ExportEnd["exportEnd"] | undefined => {
  const decoded = decodeEnd(line)
  return Either.isRight(decoded) ? decoded.right.exportEnd : undefined
}

/**
 * The first field an end line does not have, if the line is an end line but for it (and any other):
 * an import would not keep it.
 */
export const endFieldUnkept = (line: string): string | undefined => {
  if (endOf(line) !== undefined || Either.isLeft(decodeLooseEnd(line))) return undefined
  const { exportEnd, ...others } = JSON.parse(line) as { readonly exportEnd: Record<string, unknown> }
  const known = new Set(Object.keys(ExportEnd.fields.exportEnd.fields))
  return Object.keys(others)[0] ?? Object.keys(exportEnd).find((field) => !known.has(field))
}

/**
 * Why `entries` are not the whole export that `end` describes (`undefined` when they are): the end
 * line is missing, or names another saga, count or last hash.
 */
export const endProblem = (
  entries: ReadonlyArray<Entry>,
  end: ExportEnd["exportEnd"] | undefined
): string | undefined => {
  const count = `${entries.length} ${entries.length === 1 ? "entry" : "entries"}`
  if (end === undefined) return `the export has no end line after its ${count}: it was cut short`
  if (end.sagaId !== entries[0]!.sagaId) return "the export's end line names another saga"
  if (end.entries !== entries.length) {
    return `the export's end line counts ${end.entries} entries, the file holds ${count}: lines are missing`
  }
  if (end.digest !== entries.at(-1)!.hash) return "the export's end line names another last hash than its last entry's"
  return undefined
}
