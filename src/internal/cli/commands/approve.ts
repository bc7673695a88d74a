/**
 * `effect-saga approve SAGA STEP --as WHO [--expires-at T] [--revision N] [--digest H]`.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import type { Recorded } from "../../../Journal.js"
import { decodeEntry, Journal } from "../../../Journal.js"
import * as Saga from "../../../Saga.js"
import { RUN_SUFFIX } from "../../util/identifier.js"
import { quotingAsGiven } from "../../util/pastExpiry.js"
import { printable } from "../../util/printable.js"
import { askAgain } from "../../util/undoRunAdvice.js"
import { lapsedNote } from "../lapsedApproval.js"
import { print } from "../output.js"
import * as Parse from "../parse.js"
import { type Pointed, target } from "../position.js"
import { as, db, digest, revision, saga, step, withStore } from "../root.js"

const expiresAt = Options.text("expires-at").pipe(
  Options.withPseudoName("TIME"),
  Options.withDescription("When the approval lapses (ISO-8601; default: the tool's or the worker's approval TTL)."),
  Options.optional
)

/**
 * What an approve that changed nothing says: who approved the step first and when, and whether it
 * has run since (asking again exactly as the first time is answered as the first time).
 */
const alreadyApproved = (
  entries: ReadonlyArray<Recorded>,
  step: Saga.StepStatus | undefined,
  sagaId: string,
  stepId: string
): string => {
  const first = entries.find(
    (entry): entry is Recorded<"APPROVED"> => entry.phase === "APPROVED" && entry.stepId === stepId
  )?.payload
  const by = first?.by ?? "someone"
  const at = first === undefined ? "" : ` at ${first.at}`
  const ran =
    step === undefined || step.state === "approved" || step.state === "awaiting_approval"
      ? ""
      : `, and the step has run since (${step.state})`
  return `step ${stepId} of saga ${sagaId} was already approved by ${by}${at}${ran}: nothing written`
}

/** When an approved step runs: when its saga is resumed; an explicit undo's, when the undo is asked for again. */
const whenItRuns = (sagaId: string): string =>
  sagaId.endsWith(RUN_SUFFIX)
    ? `the undo runs when it is asked for again (nothing resumes a run): ${askAgain(sagaId.slice(0, -RUN_SUFFIX.length))}`
    : "the step runs when the saga is resumed"

/**
 * What `approve` does on the store it opened, and what it says it did: whether this call journaled
 * APPROVED (`Saga.withWrites`), never whether the saga moved since it read it (of two sent at once,
 * one writes and the other finds that write).
 *
 * @since 0.4.0
 * @category commands
 */
export const approveOn = (pointed: Pointed, by: string, expires: string | undefined) =>
  Effect.gen(function* () {
    const { seen, stepId } = yield* target(pointed.saga, pointed.step, pointed)
    const { written } = yield* Saga.withWrites(Saga.approve(pointed.saga, stepId, { by, expiresAt: expires, ...seen }))
    if (written > 0) {
      return `approved step ${stepId} of saga ${pointed.saga} as ${by}${expires === undefined ? "" : ` until ${expires}`}: journaled APPROVED; ${whenItRuns(pointed.saga)}`
    }
    const entries = yield* Effect.flatMap(Journal, (journal) => journal.read(pointed.saga))
    const records = yield* Either.all(entries.map(decodeEntry))
    // Read again: the status read before approving may predate the approval another command wrote.
    const status = yield* Saga.status(pointed.saga)
    const said = alreadyApproved(
      records,
      status.steps.find((step) => step.stepId === stepId),
      pointed.saga,
      stepId
    )
    return said + (yield* lapsedNote(status, entries, stepId))
  })

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
    const approving = quotingAsGiven(Option.getOrUndefined(options.expiresAt), expires)(approveOn(options, by, expires))
    yield* withStore(
      options.db,
      Effect.flatMap(approving, (said) => print(printable(said))),
      { access: "write", as: by }
    )
  })
).pipe(
  Command.withDescription(
    "Approve a step awaiting approval, for exactly the input it waits with: journaled APPROVED. Nothing runs until the saga is resumed. Asked again exactly as before (same --as and --expires-at), it says the step was already approved and writes nothing (exit 0)."
  )
)
