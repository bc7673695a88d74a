/**
 * What a saga was started from, read from its entries (and so who can resume it): the CLI's `show`
 * and `list` and the HTTP API read it. Why a step's outcome is unknown is `Timeline.unknownReasons`.
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
