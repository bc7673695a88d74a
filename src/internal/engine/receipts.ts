/**
 * A step's receipt at rest: sealed (AES-256-GCM) under the receipt keys when they are configured,
 * bound to its saga and step; in plain text otherwise, which the log says once a process.
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type { KeyRing } from "../../Keys.js"
import { RECEIPT_KEYS } from "../../Keys.js"
import type { JournaledReceipt } from "../journal/payloads.js"
import { open, seal } from "../util/crypto.js"

/** What a sealed receipt is bound to: it opens only as the receipt of this step of this saga. */
export const associatedData = (sagaId: string, stepId: string): string =>
  `effect-saga/receipt/v1\n${JSON.stringify([sagaId, stepId])}`

/** Whether the plain-text warning was logged in this process. */
let warnedPlain = false

const warnPlainOnce = Effect.suspend(() => {
  if (warnedPlain) return Effect.void
  warnedPlain = true
  return Effect.logWarning(
    `effect-saga: receipts are stored in plain text in the journal (EXECUTED payloads, NDJSON exports): set ${RECEIPT_KEYS} to seal them, in the environment or in the ConfigProvider the Saga layer is built with (docs/security.md)`
  )
})

/**
 * The receipt as the `EXECUTED` payload journals it: sealed under the ring's first key, or, without
 * a ring, the plain string (and the one-time warning).
 */
export const journaled = (
  keys: KeyRing | undefined,
  sagaId: string,
  stepId: string,
  plaintext: string
): Effect.Effect<JournaledReceipt> =>
  keys === undefined
    ? Effect.as(warnPlainOnce, plaintext)
    : Effect.sync(() => seal(keys, plaintext, associatedData(sagaId, stepId)))

/** A receipt an operator gives: `Redacted`, or (from JavaScript) plain text, as `step.setReceipt` takes it. */
export const textOf = (receipt: Redacted.Redacted<string> | string): string =>
  Redacted.isRedacted(receipt) ? Redacted.value(receipt) : String(receipt)

/** Whether a step's journaled receipt was set (plain or sealed), whether or not it opens here. */
export const isSet = (journaledReceipt: JournaledReceipt | undefined): boolean =>
  typeof journaledReceipt === "string" || journaledReceipt?.tag !== undefined

/**
 * The receipt an undo receives: none, the plaintext as `Redacted`, or (left) why it cannot be
 * opened in this process, naming the key id.
 */
export const forUndo = (
  keys: KeyRing | undefined,
  sagaId: string,
  stepId: string,
  journaledReceipt: JournaledReceipt | undefined
): Either.Either<Option.Option<Redacted.Redacted<string>>, string> => {
  if (journaledReceipt === undefined) return Either.right(Option.none())
  if (typeof journaledReceipt === "string") return Either.right(Option.some(Redacted.make(journaledReceipt)))
  const { tag } = journaledReceipt
  if (tag === undefined) return Either.left("its journaled receipt is neither text nor a sealed receipt")
  const opened = open(keys, { ...journaledReceipt, tag }, associatedData(sagaId, stepId))
  return opened._tag === "Opened"
    ? Either.right(Option.some(Redacted.make(opened.plaintext)))
    : Either.left(`its receipt cannot be opened (${RECEIPT_KEYS}): ${opened.reason}`)
}
