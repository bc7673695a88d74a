/**
 * Saying in one short line which field of a stored or imported entry (or saga row) does not decode,
 * and why (`phase "HACKED" is not a known phase`): never the schema's whole tree, never a value
 * that may hold a secret.
 */
import * as ParseResult from "effect/ParseResult"
import { cut, typeName } from "../util/printable.js"

/** What each stored column must hold, as `describeUndecodable` says it. */
const columnKinds: Record<string, string> = {
  phase: "a known phase",
  status: "a known status",
  seq: "a positive integer",
  revision: "an integer",
  stepId: "text or null",
  toolName: "text or null",
  input: "text or null",
  payload: "text or null",
  lease: "a lease or none",
  sagaId: "text",
  at: "text",
  hash: "text",
  mac: "text",
  digest: "text",
  createdAt: "text",
  updatedAt: "text"
}

/** At most `max` characters of `text`, on one line. */
export const oneLine = (text: string, max: number): string => cut(text.replace(/\s+/g, " ").trim(), max)

/**
 * Which stored column (or imported field) does not decode and why, in one short line (`phase "HACKED" is not a known
 * phase`), never the schema's whole tree.
 */
export const describeUndecodable = (row: unknown, error: ParseResult.ParseError): string => {
  const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
  const column = issue?.path[0]
  if (typeof column !== "string" || columnKinds[column] === undefined) return oneLine(issue?.message ?? "", 120)
  const value = (row as Record<string, unknown>)[column]
  if (value === undefined) return `${column} is missing`
  const bytes = value instanceof Uint8Array
  // What an input or a payload holds may be a secret (a receipt): only its kind is named. Other
  // bytes are shown in hex, as the CLI prints a stored column.
  const shown = mayHoldSecrets.has(column)
    ? `(${bytes ? "bytes" : typeName(value)})`
    : bytes
      ? `(bytes ${oneLine(Buffer.from(value).toString("hex"), 60)})`
      : oneLine(JSON.stringify(value) ?? String(value), 60)
  return `${column} ${shown} is not ${columnKinds[column]}`
}

/** The columns whose values a message never shows. */
const mayHoldSecrets: ReadonlySet<string> = new Set(["input", "payload", "mac", "hash", "digest"])
