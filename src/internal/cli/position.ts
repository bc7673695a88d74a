/**
 * Where the operator says a saga stands: the `revision`/`digest` a changing command carries, and
 * the step a `STEP` argument names.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { JournalTampered } from "../../Journal.js"
import * as Saga from "../../Saga.js"
import * as identifier from "../util/identifier.js"
import * as revisions from "../util/revisions.js"
import { UsageError } from "./failure.js"

/**
 * The position a command carries: what the operator passed (`--revision`, `--digest`), or, when
 * they passed neither, the saga's position as `status` just read it.
 *
 * NOTE: with `--revision` the command is refused if the saga moved on since the operator looked at
 * it; without, it only guards the moment between this read and the command's own write.
 *
 * @since 0.1.0
 * @category position
 */
export const seen = (
  status: Saga.SagaStatus,
  given: { readonly revision: Option.Option<number>; readonly digest: Option.Option<string> }
): Saga.Seen =>
  Option.isNone(given.revision) && Option.isNone(given.digest)
    ? { revision: status.revision, digest: status.digest }
    : { revision: Option.getOrUndefined(given.revision), digest: Option.getOrUndefined(given.digest) }

/**
 * The id of the step `step` names: a step id of the saga, or the start of exactly one. An id that
 * names no step is passed on as it is, for the saga service to refuse.
 *
 * @since 0.1.0
 * @category position
 */
export const stepId = (status: Saga.SagaStatus, step: string): Effect.Effect<string, UsageError> => {
  if (status.steps.some((known) => known.stepId === step)) return Effect.succeed(step)
  const matches = status.steps.filter((known) => known.stepId.startsWith(step))
  if (matches.length === 1) return Effect.succeed(matches[0]!.stepId)
  if (matches.length === 0) return Effect.succeed(step)
  return Effect.fail(
    new UsageError({
      message: `step "${step}" could be any of ${matches.length} steps of saga ${status.sagaId} (${matches
        .map((match) => match.stepId)
        .join(", ")}): give more of its id`
    })
  )
}

/**
 * The saga as `Saga.status` reads it, refused with `JournalTampered` (exit 1, as the saga service
 * refuses it) when its journal does not verify: its steps stop at the break, so nothing a changing
 * command checks on them (a step's id, the tools its undo needs) is answered before that.
 *
 * @since 0.4.0
 * @category position
 */
export const verifiedStatus = (sagaId: string) =>
  Effect.flatMap(Saga.status(sagaId), (status) =>
    status.tampered === undefined ? Effect.succeed(status) : new JournalTampered({ sagaId, ...status.tampered })
  )

/**
 * What a changing command is pointed at: the saga, the step (its id or the start of one), and the
 * position the operator passed, if any.
 *
 * @since 0.4.0
 * @category position
 */
export interface Pointed {
  readonly saga: string
  readonly step: string
  readonly revision: Option.Option<number>
  readonly digest: Option.Option<string>
}

/**
 * What a changing command acts on: the saga as `verifiedStatus` reads it, the full id of the step
 * `step` names, and the position to carry (see `seen`).
 *
 * @since 0.1.0
 * @category position
 */
export const target = (
  sagaId: string,
  step: string,
  given: { readonly revision: Option.Option<number>; readonly digest: Option.Option<string> }
) =>
  Effect.gen(function* () {
    // Checked before the saga is read, as the saga service checks it: "" would name a saga's only step.
    yield* identifier.check("step id", step, identifier.MAX_JOURNAL_ID_BYTES)
    const status = yield* verifiedStatus(sagaId)
    return { status, stepId: yield* stepId(status, step), seen: seen(status, given) }
  })

/**
 * The revisions `entries` (in `seq` order) hold, as a sentence ends: `revision 11`, `revisions 11–14`.
 *
 * @since 0.4.0
 * @category position
 */
export const revisionsOf: (entries: ReadonlyArray<{ readonly seq: number }>) => string = revisions.revisionsOf
