/**
 * What `show` reads from a saga's entries beyond its status: what it was started from (and so
 * who can resume it), and why each step whose outcome is unknown is unknown.
 *
 * @since 0.4.0
 */
import * as Either from "effect/Either"
import type { Entry, Recorded } from "../../Journal.js"
import { decodeEntry } from "../../Journal.js"

/**
 * What a saga was started from, as its `SAGA_STARTED` says: a definition (by name), a plain
 * program (`Saga.run`), or the explicit undo of one effect.
 *
 * @since 0.4.0
 * @category models
 */
export type Origin =
  | { readonly _tag: "Definition"; readonly name: string }
  | { readonly _tag: "Program" }
  | { readonly _tag: "Effect"; readonly effectId: string }

const recorded = (entry: Entry): Recorded | undefined =>
  Either.getOrUndefined(Either.map(decodeEntry(entry), (decoded): Recorded => decoded))

/**
 * What the saga was started from; `undefined` when its `SAGA_STARTED` cannot be read.
 *
 * @since 0.4.0
 * @category reading
 */
export const originOf = (entries: ReadonlyArray<Entry>): Origin | undefined => {
  const first = entries.find((entry) => entry.phase === "SAGA_STARTED")
  const started = first === undefined ? undefined : recorded(first)
  if (started?.phase !== "SAGA_STARTED") return undefined
  const payload = started.payload
  if (payload === null) return { _tag: "Program" }
  return "definition" in payload
    ? { _tag: "Definition", name: payload.definition }
    : { _tag: "Effect", effectId: payload.effectId }
}

/**
 * Why each step whose last `INTENT` has no outcome is unknown, by step id: the reason the last
 * `SAGA_NEEDS_ATTENTION` after that `INTENT` journaled (a timeout, a defect, `Outcome.unknown`'s
 * words). A step the saga has not stopped on yet (its worker died) has none.
 *
 * @since 0.4.0
 * @category reading
 */
export const unknownReasons = (entries: ReadonlyArray<Entry>): ReadonlyMap<string, string> => {
  const reasons = new Map<string, string>()
  for (const entry of entries) {
    if (entry.phase === "INTENT" && entry.stepId !== null) reasons.delete(entry.stepId)
    if (entry.phase !== "SAGA_NEEDS_ATTENTION") continue
    const decoded = recorded(entry)
    if (decoded?.phase !== "SAGA_NEEDS_ATTENTION" || !("unknown" in decoded.payload)) continue
    for (const step of decoded.payload.unknown) reasons.set(step.stepId, step.reason)
  }
  return reasons
}
