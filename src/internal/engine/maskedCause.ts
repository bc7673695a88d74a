/**
 * A cause with the receipts a run's calls set masked where they can be: in what a tool or an undo
 * failed or died with (its message, its fields, its cause), never in the library's own errors,
 * which it composes from ids and from texts it masked when it made them. Whatever is then written
 * from the cause (a `FAILED` description, the reason `NeedsAttention` gives, the cause
 * `SAGA_COMPENSATING` journals, an undo's detail, a step's span) composes the library's words
 * around masked parts: they never pass through the mask.
 */
import * as Cause from "effect/Cause"
import * as Predicate from "effect/Predicate"
import { ErrorTypeId as ApprovalErrorTypeId } from "../../Approval.js"
import { ErrorTypeId as AuthorityErrorTypeId } from "../../Authority.js"
import { ErrorTypeId as CompensableErrorTypeId } from "../../Compensable.js"
import { TypeId as SagaErrorTypeId } from "../../SagaError.js"
import { ErrorTypeId as JournalErrorTypeId } from "../journal/errors.js"
import { cutDetail } from "../util/detail.js"
import { maskedValue } from "../util/maskedValue.js"
import { isComposedMasked, masked } from "../util/masking.js"

const OWN_ERRORS: ReadonlyArray<symbol> = [
  SagaErrorTypeId,
  CompensableErrorTypeId,
  AuthorityErrorTypeId,
  ApprovalErrorTypeId,
  JournalErrorTypeId
]

/** Whether the library made `error` (one of its error families, or marked `composedOfMasked`): nothing in it is masked again. */
export const isOwnError = (error: unknown): boolean =>
  isComposedMasked(error) || OWN_ERRORS.some((typeId) => Predicate.hasProperty(error, typeId))

/**
 * `cause` with every failure and defect that is not the library's own masked by `receipts`
 * (`maskedValue`: the same class, its texts masked); the cause itself when there is nothing to mask.
 */
export const maskedCause = <E>(cause: Cause.Cause<E>, receipts: ReadonlyArray<string> | undefined): Cause.Cause<E> =>
  receipts === undefined || receipts.length === 0 ? cause : shownCause(cause, (text) => masked(text, receipts))

/**
 * `cause` with every text of a tool's error cut at `MAX_DETAIL` characters (the journal's own
 * bound), as a span ends with it (masked first), so that one huge error (a provider's 5 MB error
 * page) does not reach every trace and log whole.
 */
export const cutCause = <E>(cause: Cause.Cause<E>): Cause.Cause<E> => shownCause(cause, cutDetail)

/** `cause` with every failure and defect that is not the library's own copied with `show` applied to each of its texts. */
const shownCause = <E>(cause: Cause.Cause<E>, show: (text: string) => string): Cause.Cause<E> => {
  let changed = false
  const shown = <A>(value: A): A => {
    if (isOwnError(value)) return value
    // `Effect.fail` wraps an error in a proxy that carries its span: the copy is of the error itself.
    const original = Cause.originalError(value)
    const copy = maskedValue(original, show) as A
    if (copy === original) return value
    changed = true
    return copy
  }
  const copy = Cause.match(cause, {
    onEmpty: Cause.empty as Cause.Cause<E>,
    onFail: (error) => Cause.fail(shown(error)),
    onDie: (defect) => Cause.die(shown(defect)),
    onInterrupt: (fiberId) => Cause.interrupt(fiberId) as Cause.Cause<E>,
    onSequential: (left, right) => Cause.sequential(left, right),
    onParallel: (left, right) => Cause.parallel(left, right)
  })
  return changed ? copy : cause
}
