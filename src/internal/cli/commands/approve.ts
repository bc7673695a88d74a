/**
 * `effect-saga approve SAGA STEP --as WHO [--expires-at T] [--revision N] [--digest H]`.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Effect from "effect/Effect"
import * as Saga from "../../../Saga.js"
import { print } from "../output.js"
import * as Parse from "../parse.js"
import { target } from "../position.js"
import { as, db, digest, revision, saga, step, withStore } from "../root.js"

const expiresAt = Options.text("expires-at").pipe(
  Options.withPseudoName("TIME"),
  Options.withDescription("When the approval lapses (ISO-8601; default: the tool's or the worker's approval TTL)."),
  Options.optional
)

/**
 * The `approve` command.
 *
 * @since 0.1.0
 * @category commands
 */
export const approve = Command.make("approve", { db, as, expiresAt, revision, digest, saga, step }, (options) =>
  Effect.gen(function* () {
    const by = yield* Parse.nonBlank("--as", options.as)
    const expires = yield* Parse.optionalInstant("--expires-at", options.expiresAt)
    yield* withStore(
      options.db,
      Effect.gen(function* () {
        const { seen, stepId } = yield* target(options.saga, options.step, options)
        yield* Saga.approve(options.saga, stepId, { by, expiresAt: expires, ...seen })
        yield* print(
          `approved step ${stepId} of saga ${options.saga} as ${by}${expires === undefined ? "" : ` until ${expires}`}: journaled APPROVED; the step runs when the saga is resumed`
        )
      }),
      { access: "write", as: by }
    )
  })
).pipe(
  Command.withDescription(
    "Approve a step awaiting approval, for exactly the input it waits with: journaled APPROVED. Nothing runs until the saga is resumed."
  )
)
