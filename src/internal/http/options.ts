/**
 * The options of the API's layer (`SagaApi.layerWith`, and `SagaApi.serve`'s), checked when the
 * layer is built: from JavaScript, or `as any`, anything may come, and a value the handlers cannot
 * use would otherwise fail every request that needs it (500, or 413 for every body).
 */
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import type { Options } from "../../SagaApi.js"
import { unknownOption } from "../util/options.js"
import { given, typeName } from "../util/printable.js"
import { DEFAULT_MAX_BODY_BYTES } from "./body.js"
import { ErrorTypeId } from "./errors.js"

/**
 * `layerWith` (or `serve`) was given an option it cannot work with: `tools` that is not an array or
 * a `Set` of names, a `maxBodyBytes` that is not a whole number, 1 or more. The layer fails to build.
 *
 * @since 0.3.0
 * @category errors
 */
export class InvalidApiOptions extends Schema.TaggedError<InvalidApiOptions>("effect-saga/SagaApi/InvalidApiOptions")(
  "InvalidApiOptions",
  { option: Schema.Literal("options", "tools", "maxBodyBytes"), reason: Schema.String }
) {
  /** @since 0.4.0 */
  get [ErrorTypeId](): ErrorTypeId {
    return ErrorTypeId
  }
  override get message(): string {
    return `SagaApi.layerWith: ${this.option} ${this.reason}`
  }
}

/**
 * Whether a value is an `InvalidApiOptions`, by its `ErrorTypeId` (and its `_tag` among `SagaApi`'s
 * errors).
 *
 * @since 0.4.0
 * @category guards
 */
export const isInvalidApiOptions = (u: unknown): u is InvalidApiOptions =>
  Predicate.hasProperty(u, ErrorTypeId) && Predicate.isTagged(u, "InvalidApiOptions")

/** The options as the handlers, the guard and the console use them. */
export interface Checked {
  readonly tools: ReadonlySet<string> | undefined
  readonly maxBodyBytes: number
}

const isIterable = (value: unknown): value is Iterable<unknown> =>
  typeof value === "object" && value !== null && Symbol.iterator in value

/** The names `tools` gives, or why it gives none (text is iterable too, but as its letters). */
const toolsOf = (tools: unknown): ReadonlySet<string> | string => {
  if (!isIterable(tools)) return `is ${given(tools)}, not a list: give an array or a Set of the tools' names`
  const names = Array.from(tools)
  const index = names.findIndex((name) => typeof name !== "string")
  return index === -1
    ? new Set(names as ReadonlyArray<string>)
    : `holds ${typeName(names[index])} at index ${index}: give the tools' names, as text`
}

/** The options `layerWith` knows. */
export const apiKeys: ReadonlyArray<string> = ["tools", "maxBodyBytes"]

/** The options `serve` knows: the API's, and where and for whom it listens. */
export const serveKeys: ReadonlyArray<string> = [...apiKeys, "host", "port", "authentication", "insecure"]

/** Whether `bytes` can be a body's limit: a whole number, 1 or more, that a stream can count to. */
const isLimit = (bytes: unknown): bytes is number => Number.isSafeInteger(bytes) && (bytes as number) >= 1

/**
 * The options, checked: `tools` (absent, or an array or a `Set` of names) as a `Set`, and
 * `maxBodyBytes` (default `DEFAULT_MAX_BODY_BYTES`); `InvalidApiOptions` for the first that is neither,
 * and for options that are not an object or name an option that is none of `known` (`maxBodyByte`).
 *
 * @since 0.3.0
 * @category options
 */
export const checked = (
  supplied: Options | undefined,
  known: ReadonlyArray<string> = apiKeys
): Effect.Effect<Checked, InvalidApiOptions> =>
  Effect.suspend(() => {
    // From JavaScript, `layerWith()` or `layerWith(null)`: no options, the defaults.
    const options: Options = supplied ?? {}
    if (typeof options !== "object") {
      return Effect.fail(
        new InvalidApiOptions({
          option: "options",
          reason: `are ${typeName(options)}, not an object: give { tools, maxBodyBytes }`
        })
      )
    }
    const unknown = unknownOption(options, known)
    if (unknown !== undefined) return Effect.fail(new InvalidApiOptions({ option: "options", reason: unknown }))
    const tools = options.tools === undefined ? undefined : toolsOf(options.tools)
    if (typeof tools === "string") return Effect.fail(new InvalidApiOptions({ option: "tools", reason: tools }))
    const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES
    if (!isLimit(maxBodyBytes)) {
      return Effect.fail(
        new InvalidApiOptions({
          option: "maxBodyBytes",
          reason: `is ${given(maxBodyBytes)}, not a limit: give a whole number of bytes, 1 or more`
        })
      )
    }
    return Effect.succeed({ tools, maxBodyBytes })
  })
