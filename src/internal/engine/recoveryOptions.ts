/**
 * The options of recovery (`Recovery.make`, `Recovery.layer`), checked before anything is read or
 * claimed: from JavaScript, or `as any`, anything may come, and a value recovery cannot work with
 * would otherwise loop without pause (`every: 0`), fail every pass in the store (`batchSize: "x"`),
 * die when the layer is built (`every: "soon"`), or be taken silently (`concurrency: 0`, a misspelled option,
 * two definitions of one name: the last would win).
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import type { Principal } from "../../Authority.js"
import type { Options } from "../../Recovery.js"
import type * as SagaDefinition from "../../SagaDefinition.js"
import { principalRefusal } from "../util/identifier.js"
import { durationOf, givenDuration, unknownOption } from "../util/options.js"
import { given, typeName } from "../util/printable.js"

/**
 * The type id recovery's errors carry (`Unrecoverable`, `InvalidRecoveryOptions`): the guards
 * check it, never a `_tag` that a plain value could share. (`Recovery` re-exports it: that is its
 * public home; it lives here, beside `InvalidRecoveryOptions`, so that this file need not import
 * `Recovery.ts` back.)
 *
 * @since 0.2.0
 * @category type ids
 */
export const ErrorTypeId: unique symbol = Symbol.for("effect-saga/Recovery/Error")

/**
 * @since 0.2.0
 * @category type ids
 */
export type ErrorTypeId = typeof ErrorTypeId

/**
 * `make` or `layer` was given an option it cannot work with (see `Options` for what each accepts),
 * or one it does not know: `option` names it (`"options"` when the options are not an object, or
 * name an option there is not), `reason` says what was given. Nothing was read or claimed; the
 * layer fails to build.
 *
 * @since 0.4.0
 * @category errors
 */
export class InvalidRecoveryOptions extends Schema.TaggedError<InvalidRecoveryOptions>(
  "effect-saga/Recovery/InvalidRecoveryOptions"
)("InvalidRecoveryOptions", {
  option: Schema.Literal("options", "definitions", "concurrency", "batchSize", "principal", "every"),
  reason: Schema.String
}) {
  /** @since 0.4.0 */
  get [ErrorTypeId](): ErrorTypeId {
    return ErrorTypeId
  }
  override get message(): string {
    return `Recovery: ${this.option} ${this.reason}`
  }
}

/** The options recovery knows. */
const known: ReadonlyArray<string> = ["definitions", "concurrency", "batchSize", "principal", "every"]

/** The options as recovery uses them, defaults taken (`every`'s is the worker's lease, known later). */
export interface Checked {
  readonly concurrency: number
  readonly batchSize: number
  readonly principal: Principal
  readonly every: Duration.Duration | "startup" | undefined
}

const refuse = (option: InvalidRecoveryOptions["option"], reason: string) =>
  new InvalidRecoveryOptions({ option, reason })

/** Whether `value` is a whole number, 1 or more, that a loop and a store's `LIMIT` can count to. */
const isCount = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 1

const countOf = (option: "concurrency" | "batchSize", value: unknown, fallback: number) =>
  value === undefined
    ? Effect.succeed(fallback)
    : isCount(value)
      ? Effect.succeed(value)
      : Effect.fail(refuse(option, `is ${given(value)}, not a whole number of 1 or more`))

const principalOf = (principal: unknown): Effect.Effect<Principal, InvalidRecoveryOptions> => {
  if (principal === undefined) return Effect.succeed({ id: "effect-saga/recovery" })
  if (typeof principal !== "object" || principal === null) {
    return Effect.fail(refuse("principal", `is ${typeName(principal)}, not a principal: give { id }`))
  }
  const { id } = principal as { readonly id?: unknown }
  const refused = principalRefusal(id as string)
  return refused === undefined
    ? Effect.succeed(principal as Principal)
    : Effect.fail(refuse("principal", `id ${refused.identifier} cannot be a principal's id: ${refused.reason}`))
}

const everyOf = (every: unknown): Effect.Effect<Duration.Duration | "startup" | undefined, InvalidRecoveryOptions> => {
  if (every === undefined || every === "startup") return Effect.succeed(every)
  const duration = durationOf(every)
  // `Duration.decode` takes a negative or `NaN` number as zero: a pass would follow a pass without pause.
  return Either.isRight(duration) && Duration.toMillis(duration.right) > 0
    ? Effect.succeed(duration.right)
    : Effect.fail(refuse("every", `is ${givenDuration(every)}, not a positive duration or "startup"`))
}

/**
 * The first name two of `definitions` share, if any: a saga is resumed by the name of the
 * definition it was started from, so two by one name would leave it to the order of the list.
 */
const sharedName = (definitions: ReadonlyArray<unknown>): { readonly name: unknown } | undefined => {
  const seen = new Set<unknown>()
  for (const definition of definitions) {
    if (typeof definition !== "object" || definition === null) continue
    const { name } = definition as { readonly name?: unknown }
    if (seen.has(name)) return { name }
    seen.add(name)
  }
  return undefined
}

/** Recovery's options, or `InvalidRecoveryOptions` for the first it cannot work with. */
export const checked = (
  options: Options<ReadonlyArray<SagaDefinition.Any>>
): Effect.Effect<Checked, InvalidRecoveryOptions> =>
  Effect.suspend(() => {
    if (typeof options !== "object" || options === null) {
      return Effect.fail(refuse("options", `are ${typeName(options)}, not an object: give { definitions }`))
    }
    const unknown = unknownOption(options, known)
    if (unknown !== undefined) return Effect.fail(refuse("options", unknown))
    if (!Array.isArray(options.definitions)) {
      return Effect.fail(refuse("definitions", `is ${typeName(options.definitions)}, not a list of definitions`))
    }
    const shared = sharedName(options.definitions)
    if (shared !== undefined) {
      const reason = `name ${given(shared.name)} twice: a saga is resumed by its definition's name, so each must name one`
      return Effect.fail(refuse("definitions", reason))
    }
    return Effect.all({
      concurrency: countOf("concurrency", options.concurrency, 10),
      batchSize: countOf("batchSize", options.batchSize, 100),
      principal: principalOf(options.principal),
      every: everyOf(options.every)
    })
  })
