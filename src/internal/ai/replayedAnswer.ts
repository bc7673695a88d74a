import type * as Tool from "@effect/ai/Tool"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { cut } from "../util/printable.js"
import { withoutValues } from "../util/withoutValues.js"

/**
 * The most characters of a schema's complaint that a divergence quotes: never the values it found,
 * which are the model's parameters (a card number, say) and reach logs and spans.
 */
const MAX_COMPLAINT = 1000

/**
 * A model turn's journaled answer as this toolkit reads it on replay. One that no longer decodes (a
 * tool's parameters changed since the model called it, say) is the program's divergence from the
 * journal, not a failed model call: the turn step refuses it (`unfollowable`), so the run fails with
 * `NonDeterminism` before any of its calls is replayed, and nothing is written or undone. `decoded`
 * keeps what decoded, so that the turn does not decode it twice.
 */
export interface ReplayedAnswer {
  decoded: ReadonlyArray<unknown> | undefined
  readonly unfollowable: (answer: unknown) => string | undefined
}

/** Reads a replayed answer with `schema` (the toolkit's response parts); `tools` name the call that no longer fits. */
export const replayedAnswer = (
  schema: Schema.Schema<ReadonlyArray<unknown>, any>,
  tools: Readonly<Record<string, Tool.Any>>
): ReplayedAnswer => {
  const decode = Schema.decodeUnknownEither(schema)
  const replay: ReplayedAnswer = {
    decoded: undefined,
    unfollowable: (answer) => {
      const decoded = decode(answer)
      if (Either.isRight(decoded)) {
        replay.decoded = decoded.right
        return undefined
      }
      return (
        refusedCall(answer, tools) ??
        `the journaled answer does not decode with this toolkit's schemas: ${cut(withoutValues(decoded.left), MAX_COMPLAINT)}`
      )
    }
  }
  return replay
}

/** The first tool call of `answer` whose parameters its tool no longer accepts, in words. */
const refusedCall = (answer: unknown, tools: Readonly<Record<string, Tool.Any>>): string | undefined => {
  if (!Array.isArray(answer)) return undefined
  for (const part of answer) {
    if (part?.type !== "tool-call" || part.providerExecuted === true) continue
    const tool = tools[part.name]
    if (tool === undefined) continue
    const params = Schema.decodeUnknownEither(tool.parametersSchema as Schema.Schema<unknown, unknown>)(part.params)
    if (Either.isLeft(params)) {
      return (
        `the journaled answer calls ${part.name} (call ${part.id}) with parameters this toolkit's ${part.name} ` +
        `no longer accepts (its parameters changed since the model called it): ${cut(withoutValues(params.left), MAX_COMPLAINT)}`
      )
    }
  }
  return undefined
}
