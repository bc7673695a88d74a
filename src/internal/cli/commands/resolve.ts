/**
 * `effect-saga resolve SAGA STEP --applied --result JSON | --not-applied --as WHO`: settles a step
 * whose outcome is unknown.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Saga from "../../../Saga.js"
import { printable } from "../../util/printable.js"
import { UsageError } from "../failure.js"
import { print } from "../output.js"
import * as Parse from "../parse.js"
import { target, wroteAfter } from "../position.js"
import { as, db, digest, register, revision, saga, step, withStore } from "../root.js"
import * as Tools from "../tools.js"

const applied = Options.boolean("applied").pipe(
  Options.withDescription("The call happened: journaled EXECUTED with --result.")
)

const notApplied = Options.boolean("not-applied").pipe(
  Options.withDescription("The call did not happen: journaled FAILED; the saga compensates when resumed.")
)

const result = Options.text("result").pipe(
  Options.withPseudoName("JSON"),
  Options.withDescription(
    "With --applied: the tool's result as JSON, encoded as its success schema encodes it (null if it returns nothing). Checked against the schema when --register loads the tool."
  ),
  Options.optional
)

/** The resolution the flags describe, or why they describe none. */
const resolutionOf = (options: {
  readonly applied: boolean
  readonly notApplied: boolean
  readonly result: Option.Option<string>
  readonly by: string
}) => {
  if (options.applied === options.notApplied) {
    return Effect.fail(new UsageError({ message: "pass exactly one of --applied and --not-applied" }))
  }
  if (options.notApplied) {
    return Option.isSome(options.result)
      ? Effect.fail(new UsageError({ message: "--result goes with --applied only" }))
      : Effect.succeed({ outcome: "not-applied" as const, by: options.by })
  }
  return Option.match(options.result, {
    onNone: () =>
      Effect.fail(
        new UsageError({ message: "--applied needs --result JSON: what the tool returned (null if nothing)" })
      ),
    onSome: (text) =>
      Effect.map(Parse.json("--result", text), (value) => ({
        outcome: "applied" as const,
        by: options.by,
        result: value
      }))
  })
}

/**
 * The `resolve` command.
 *
 * @since 0.1.0
 * @category commands
 */
export const resolve = Command.make(
  "resolve",
  { db, as, applied, notApplied, result, register, revision, digest, saga, step },
  (options) =>
    Effect.gen(function* () {
      const by = yield* Parse.nonBlank("--as", options.as)
      const resolution = yield* resolutionOf({ ...options, by })
      yield* withStore(
        options.db,
        Effect.gen(function* () {
          yield* Tools.register(options.register)
          const { seen, status, stepId } = yield* target(options.saga, options.step, options)
          yield* Saga.resolve(options.saga, stepId, { ...resolution, ...seen })
          const journaled = resolution.outcome === "applied" ? "EXECUTED" : "FAILED"
          const wrote = yield* wroteAfter(options.saga, stepId, journaled, status.revision)
          yield* print(
            printable(
              wrote
                ? `resolved step ${stepId} of saga ${options.saga} as ${resolution.outcome} (${by}): journaled ${journaled}; resume the saga to go on`
                : `step ${stepId} of saga ${options.saga} was already resolved as ${resolution.outcome} by ${by}: nothing written`
            )
          )
        }),
        { access: "write", as: by }
      )
    })
).pipe(
  Command.withDescription(
    "Settle a step whose outcome is unknown, as applied (with its result) or not applied; resume the saga afterwards. Asked again exactly as before (same --as, outcome and result), it says the step was already resolved and writes nothing (exit 0)."
  )
)
