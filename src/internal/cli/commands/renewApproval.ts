/**
 * `effect-saga renew-approval SAGA STEP --as WHO [--expires-at T] [--input-digest H]`.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Saga from "../../../Saga.js"
import { printable } from "../../util/printable.js"
import { print } from "../output.js"
import * as Parse from "../parse.js"
import { target, wroteAfter } from "../position.js"
import { as, db, digest, revision, saga, step, withStore } from "../root.js"

const expiresAt = Options.text("expires-at").pipe(
  Options.withPseudoName("TIME"),
  Options.withDescription("The new expiry (ISO-8601; default: the approval TTL counted from now, or none)."),
  Options.optional
)

const inputDigest = Options.text("input-digest").pipe(
  Options.withPseudoName("SHA256"),
  Options.withDescription("The input sha256 you saw (approvals prints it): refused if the approval names another."),
  Options.optional
)

/**
 * The `renew-approval` command.
 *
 * @since 0.1.0
 * @category commands
 */
export const renewApproval = Command.make(
  "renew-approval",
  { db, as, expiresAt, inputDigest, revision, digest, saga, step },
  (options) =>
    Effect.gen(function* () {
      const by = yield* Parse.nonBlank("--as", options.as)
      const expires = yield* Parse.optionalInstant("--expires-at", options.expiresAt)
      yield* withStore(
        options.db,
        Effect.gen(function* () {
          const { seen, status, stepId } = yield* target(options.saga, options.step, options)
          yield* Saga.renewApproval(options.saga, stepId, {
            by,
            expiresAt: expires,
            inputDigest: Option.getOrUndefined(options.inputDigest),
            ...seen
          })
          const until = expires === undefined ? "" : ` until ${expires}`
          const wrote = yield* wroteAfter(options.saga, stepId, "APPROVED", status.revision)
          yield* print(
            printable(
              wrote
                ? `renewed the approval of step ${stepId} of saga ${options.saga} as ${by}${until}: journaled APPROVED`
                : `the approval of step ${stepId} of saga ${options.saga} was already renewed by ${by}${until}: nothing written`
            )
          )
        }),
        { access: "write", as: by }
      )
    })
).pipe(
  Command.withDescription(
    "Give an approved step that has not run a new expiry, for the same input: journaled APPROVED with renewedBy. Asked again exactly as before (same --as and --expires-at), it says so and writes nothing (exit 0)."
  )
)
