/** Checking the identifiers that enter the journal: saga ids, tool names, step keys. */
import * as Effect from "effect/Effect"
import type { IdentifierKind } from "../../SagaError.js"
import { InvalidIdentifier } from "../../SagaError.js"
import { preview, typeName } from "./printable.js"

export { preview }

/** The most UTF-8 bytes of a saga id that a program is run, started or resumed under. */
export const MAX_SAGA_ID_BYTES = 512

/**
 * The most UTF-8 bytes of the id a command or a read names: a saga's, or the journal id of an
 * explicit undo's run (`<sagaId>/<stepId>/compensate-effect`, at most 933 bytes with the limits here).
 */
export const MAX_JOURNAL_ID_BYTES = 1024

/** The most UTF-8 bytes of a tool's name. */
export const MAX_TOOL_NAME_BYTES = 128

/** The most UTF-8 bytes of a call's explicit `key`. */
export const MAX_STEP_KEY_BYTES = 256

/** The most UTF-8 bytes of who an operator's command names as deciding (`by`). */
export const MAX_PRINCIPAL_BYTES = 256

/** A lone surrogate (`Cs` in a `u` regex matches only unpaired ones) or a control character (C0, DEL, C1). */
const forbidden = /[\p{Cs}\p{Cc}]/u

/**
 * Whether `text` holds what no identifier holds (a control character, a lone surrogate): a search
 * for it matches no saga id, and need not ask a store (PostgreSQL refuses a NUL in text).
 */
export const holdsNoIdentifierText = (text: string): boolean => forbidden.test(text)

/** A lone surrogate. */
const loneSurrogate = /\p{Cs}/u

/** `String.prototype.isWellFormed` (ES2024, Node 20+): native, and much faster than a regex scan. */
const isWellFormed = (String.prototype as unknown as { readonly isWellFormed: (this: string) => boolean }).isWellFormed

const hex = (unit: number): string => `U+${unit.toString(16).toUpperCase().padStart(4, "0")}`

/**
 * Why `text` cannot be an identifier of at most `maxBytes` UTF-8 bytes, if it cannot: empty, not
 * well-formed Unicode (a lone surrogate, which no store keeps as it was written), a control
 * character (it would forge lines in logs and terminals), or too long.
 */
export const identifierProblem = (text: string, maxBytes: number): string | undefined => {
  // From JavaScript, or `as any`, anything may come: a number, null.
  if (typeof text !== "string") return `it is not text but ${typeName(text)}`
  if (text.length === 0) return "it is empty"
  const found = forbidden.exec(text)
  if (found !== null) {
    const at = `(${hex(found[0].charCodeAt(0))}) at index ${found.index}`
    return loneSurrogate.test(found[0])
      ? `it is not well-formed Unicode: a lone surrogate ${at}`
      : `it holds a control character ${at}`
  }
  // A UTF-16 code unit is at most 3 UTF-8 bytes: most identifiers need no count.
  if (text.length * 3 <= maxBytes) return undefined
  const bytes = Buffer.byteLength(text, "utf8")
  return bytes > maxBytes ? `it is ${bytes} UTF-8 bytes, over the limit of ${maxBytes}` : undefined
}

/**
 * A `/` `text` holds, if any. An effect id (a step's forward idempotency key) is
 * `<saga id>/<step id>`, and a step id `<tool name>:<key or digest>#<occurrence>`: saga ids may hold
 * `/`, so a `/` in a tool name or a key would let steps of two sagas share an effect id.
 */
const slashProblem = (text: string): string | undefined => {
  const at = text.indexOf("/")
  return at === -1 ? undefined : `it holds "/" at index ${at}, which ends the saga id in effect ids`
}

/**
 * Why `name` cannot be a tool's name, if it cannot: as an identifier, for a `/` it holds, or for
 * its length in step ids, which write each `:` and `%` of it in three bytes (`%3A`, `%25`).
 */
export const toolNameProblem = (name: string): string | undefined =>
  identifierProblem(name, MAX_TOOL_NAME_BYTES) ?? slashProblem(name) ?? escapedLengthProblem(name)

const escapedLengthProblem = (name: string): string | undefined => {
  const escapes = name.length - name.replaceAll(":", "").replaceAll("%", "").length
  if (escapes === 0) return undefined
  const bytes = Buffer.byteLength(name, "utf8") + 2 * escapes
  return bytes > MAX_TOOL_NAME_BYTES
    ? `it is ${bytes} UTF-8 bytes as step ids write it (each : and % as %3A, %25), over the limit of ${MAX_TOOL_NAME_BYTES}`
    : undefined
}

/**
 * Why `sagaId` cannot be a saga's id in a URL, if it cannot: every URL parser takes `.` and `..` as
 * steps of the path (also written `%2E`), so the HTTP API and the console could never name the saga.
 */
const dotSegmentProblem = (sagaId: string): string | undefined =>
  sagaId === "." || sagaId === ".."
    ? `it is "${sagaId}", which a URL takes as a step of its path: the HTTP API could not name the saga`
    : undefined

/**
 * `text` as spans and log lines show a saga, step or effect id (or a definition's name): as it is
 * when it can be an identifier of at most `MAX_JOURNAL_ID_BYTES` (a command's saga id may name an
 * explicit undo's run), else escaped and cut (`preview`), as `InvalidIdentifier` quotes it. A span
 * is opened before its id is checked, and a refused id must not forge a line or grow unbounded in a
 * trace. (A run's own span shows its saga id as `sagaIdRefusal` judged it.)
 */
export const shownIdentifier = (text: string): string =>
  identifierProblem(text, MAX_JOURNAL_ID_BYTES) === undefined ? text : preview(text)

/** How the journal id of an explicit undo's run ends (`<effect id>/compensate-effect`). */
export const RUN_SUFFIX = "/compensate-effect"

/** The `InvalidIdentifier` that refuses `sagaId` as a saga's id (also one that names an explicit undo's run), if it is refused. */
export const sagaIdRefusal = (sagaId: string): InvalidIdentifier | undefined => {
  const reason =
    identifierProblem(sagaId, MAX_SAGA_ID_BYTES) ??
    (sagaId.endsWith(RUN_SUFFIX)
      ? `it ends with "${RUN_SUFFIX}", which names the run of an explicit undo`
      : undefined) ??
    dotSegmentProblem(sagaId)
  return reason === undefined
    ? undefined
    : new InvalidIdentifier({ kind: "saga id", identifier: preview(sagaId), reason })
}

/** Why `key` cannot be a call's step key, if it cannot: as an identifier, or for a `/` it holds. */
export const stepKeyProblem = (key: string): string | undefined =>
  identifierProblem(key, MAX_STEP_KEY_BYTES) ?? slashProblem(key)

/** The `InvalidIdentifier` that refuses `key` as a call's step key, if it is refused (also for a `/` it holds). */
export const stepKeyRefusal = (key: string): InvalidIdentifier | undefined => {
  const reason = stepKeyProblem(key)
  return reason === undefined
    ? undefined
    : new InvalidIdentifier({ kind: "step key", identifier: preview(key), reason })
}

/**
 * The `InvalidIdentifier` that refuses `by`, who an operator's command names as deciding, if it is
 * refused: as an identifier (it is journaled and printed as one), and when it is only blanks.
 */
export const principalRefusal = (by: string): InvalidIdentifier | undefined => {
  const reason =
    identifierProblem(by, MAX_PRINCIPAL_BYTES) ?? (by.trim() === "" ? "it is blank: it names no one" : undefined)
  return reason === undefined
    ? undefined
    : new InvalidIdentifier({ kind: "principal", identifier: preview(by), reason })
}

/** The `InvalidIdentifier` that refuses `text` as an identifier of this kind and size, if it is refused. */
export const refusal = (kind: IdentifierKind, text: string, maxBytes: number): InvalidIdentifier | undefined => {
  const reason = identifierProblem(text, maxBytes)
  return reason === undefined ? undefined : new InvalidIdentifier({ kind, identifier: preview(text), reason })
}

/** Fails with `InvalidIdentifier` if `text` cannot be an identifier of this kind and size. */
export const check = (kind: IdentifierKind, text: string, maxBytes: number): Effect.Effect<void, InvalidIdentifier> =>
  Effect.suspend(() => {
    const refused = refusal(kind, text, maxBytes)
    return refused === undefined ? Effect.void : Effect.fail(refused)
  })

/**
 * Why a text field cannot be stored as it is, if it cannot: a lone surrogate, which no store keeps,
 * or a NUL character, which PostgreSQL's text refuses (every store refuses it: a journal reads the
 * same on every store, and an export of one imports into another).
 */
export const unstorable = (text: string | null | undefined): string | undefined => {
  if (text === null || text === undefined) return undefined
  const nul = text.indexOf("\0")
  if (nul !== -1) {
    return `${preview(text)} holds a NUL character (U+0000) at index ${nul}: PostgreSQL cannot store it, so no store does`
  }
  if (isWellFormed.call(text)) return undefined
  const found = loneSurrogate.exec(text)
  return found === null
    ? undefined
    : `${preview(text)} is not well-formed Unicode (a lone surrogate at index ${found.index}): no store keeps it as it was written, so its hash would not verify`
}
