/**
 * `effect-saga renew-approval SAGA STEP --as WHO [--expires-at T] [--input-digest H]`.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { Journal } from "../../../Journal.js"
import * as Saga from "../../../Saga.js"
import { quotingAsGiven } from "../../util/pastExpiry.js"
import { printable } from "../../util/printable.js"
import { lapsedNote } from "../lapsedApproval.js"
import { print } from "../output.js"
import * as Parse from "../parse.js"
import { type Pointed, target } from "../position.js"
import { as, db, digest, revision, saga, sha256Only, step, withStore } from "../root.js"

const expiresAt = Options.text("expires-at").pipe(
  Options.withPseudoName("TIME"),
  Options.withDescription("The new expiry (ISO-8601; default: the approval TTL counted from now, or none)."),
  Options.optional
)

const inputDigest = Options.text("input-digest").pipe(
  Options.withPseudoName("SHA256"),
  Options.withDescription(
    "The input sha256 you approved (show SAGA --json: its APPROVED entry's inputDigest): refused if the approval names another."
  ),
  // A mistyped or cut hash names no input at all: say so, not that the approval names another.
  sha256Only(
    (text) =>
      `--input-digest ${text} is not an input's SHA-256 (64 hex digits, 0-9 a-f): give the approved one, the inputDigest of the step's APPROVED entry in effect-saga show SAGA --json`
  ),
  Options.optional
)

/**
 * What `renew-approval` does on the store it opened, and what it says it did: whether this call
 * journaled APPROVED (`Saga.withWrites`), never whether the saga moved since it read it.
 *
 * @since 0.4.0
 * @category commands
 */
export const renewApprovalOn = (
  pointed: Pointed,
  renewal: { readonly by: string; readonly expires: string | undefined; readonly inputDigest: string | undefined }
) =>
  Effect.gen(function* () {
    const { by, expires } = renewal
    const { seen, stepId } = yield* target(pointed.saga, pointed.step, pointed)
    const { written } = yield* Saga.withWrites(
      Saga.renewApproval(pointed.saga, stepId, { by, expiresAt: expires, inputDigest: renewal.inputDigest, ...seen })
    )
    const until = expires === undefined ? "" : ` until ${expires}`
    if (written > 0) {
      return `renewed the approval of step ${stepId} of saga ${pointed.saga} as ${by}${until}: journaled APPROVED`
    }
    const said = `the approval of step ${stepId} of saga ${pointed.saga} was already renewed by ${by}${until}: nothing written`
    const status = yield* Saga.status(pointed.saga)
    const entries = yield* Effect.flatMap(Journal, (journal) => journal.read(pointed.saga))
    return said + (yield* lapsedNote(status, entries, stepId))
  })

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
      const renewal = { by, expires, inputDigest: Option.getOrUndefined(options.inputDigest) }
      const renewing = quotingAsGiven(
        Option.getOrUndefined(options.expiresAt),
        expires
      )(renewApprovalOn(options, renewal))
      yield* withStore(
        options.db,
        Effect.flatMap(renewing, (said) => print(printable(said))),
        { access: "write", as: by }
      )
    })
).pipe(
  Command.withDescription(
    "Give an approved step that has not run a new expiry, for the same input: journaled APPROVED with renewedBy. Asked again exactly as before (same --as and --expires-at), it says so and writes nothing (exit 0)."
  )
)
