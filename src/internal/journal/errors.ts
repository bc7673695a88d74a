/**
 * The journal's errors (`Journal` re-exports them: that is their public home). They live here so
 * that the stores, which `Journal.ts` imports, can build them without importing it back.
 */
import * as Schema from "effect/Schema"
import { named } from "../util/printable.js"

/**
 * The type id the journal's errors carry: `isJournalError` checks it, never a `_tag` that a plain
 * value could share.
 *
 * @since 0.2.0
 * @category type ids
 */
export const ErrorTypeId: unique symbol = Symbol.for("effect-saga/Journal/Error")

/**
 * @since 0.2.0
 * @category type ids
 */
export type ErrorTypeId = typeof ErrorTypeId

/**
 * The saga moved on since the writer last saw it: this write was refused. Expected at revision 0 (a
 * saga begun or imported, or a command given revision 0), it exists already: the message says so.
 * `written`: the entries the caller that got it (a run, or an operator's command) had journaled
 * before this write (a run's `SAGA_STARTED` and steps, an undo's `COMPENSATING`), when it had;
 * absent, nothing was written.
 *
 * @since 0.1.0
 * @category errors
 */
export class ConcurrencyConflict extends Schema.TaggedError<ConcurrencyConflict>("effect-saga/ConcurrencyConflict")(
  "ConcurrencyConflict",
  {
    sagaId: Schema.String,
    expectedRevision: Schema.Int,
    actualRevision: Schema.Int,
    /** @since 0.4.0 */
    written: Schema.optional(Schema.Int)
  }
) {
  /** @since 0.2.0 */
  get [ErrorTypeId](): ErrorTypeId {
    return ErrorTypeId
  }
  override get message(): string {
    if (this.written !== undefined && this.written > 0) {
      const first = this.expectedRevision - this.written + 1
      const wrote = this.written === 1 ? `revision ${first}` : `revisions ${first}–${this.expectedRevision}`
      const where =
        this.actualRevision === this.expectedRevision
          ? `revision ${this.actualRevision}, with another digest than this caller's`
          : `revision ${this.actualRevision}, not ${this.expectedRevision}`
      return `saga ${this.sagaId} is at ${where}: it moved on after this caller wrote ${wrote}; its next write was refused`
    }
    if (this.expectedRevision === 0 && this.actualRevision > 0) {
      // An import, a new saga's first append, or a command given revision 0: each expected no saga.
      return `saga ${this.sagaId} is at revision ${this.actualRevision}, not 0: it exists already, nothing was written`
    }
    const where =
      this.actualRevision === this.expectedRevision
        ? `revision ${this.actualRevision}, with another digest than the one given`
        : `revision ${this.actualRevision}, not ${this.expectedRevision}`
    return `saga ${this.sagaId} is at ${where}: it moved on, nothing was written`
  }
}

/**
 * Another worker holds the saga's lease: it is driving the saga right now, and this write was
 * refused. `written`: the entries the caller that got it (a run, or an operator's command) had
 * journaled before (see `ConcurrencyConflict`); absent, nothing was written.
 *
 * @since 0.1.0
 * @category errors
 */
export class LeaseHeld extends Schema.TaggedError<LeaseHeld>("effect-saga/LeaseHeld")("LeaseHeld", {
  sagaId: Schema.String,
  owner: Schema.String,
  expiresAt: Schema.String,
  /** @since 0.4.0 */
  written: Schema.optional(Schema.Int)
}) {
  /** @since 0.2.0 */
  get [ErrorTypeId](): ErrorTypeId {
    return ErrorTypeId
  }
  override get message(): string {
    if (this.written !== undefined && this.written > 0) {
      const entries = this.written === 1 ? "1 entry" : `${this.written} entries`
      return `saga ${this.sagaId} is being driven by ${this.owner} (lease until ${this.expiresAt}): this caller had written ${entries}, its next write was refused`
    }
    return `saga ${this.sagaId} is being driven by ${this.owner} (lease until ${this.expiresAt}): nothing was written`
  }
}

/**
 * The store could not be read or written.
 *
 * @since 0.1.0
 * @category errors
 */
export class JournalError extends Schema.TaggedError<JournalError>("effect-saga/JournalError")("JournalError", {
  operation: Schema.String,
  reason: Schema.String
}) {
  /** @since 0.2.0 */
  get [ErrorTypeId](): ErrorTypeId {
    return ErrorTypeId
  }
  override get message(): string {
    return `journal ${this.operation} failed: ${this.reason}`
  }
}

/**
 * An entry the store holds cannot be trusted: a row that does not decode, a payload that no longer
 * fits its schema, or a broken hash chain.
 *
 * @since 0.1.0
 * @category errors
 */
export class JournalCorrupted extends Schema.TaggedError<JournalCorrupted>("effect-saga/JournalCorrupted")(
  "JournalCorrupted",
  { sagaId: Schema.String, seq: Schema.Int, reason: Schema.String }
) {
  /** @since 0.2.0 */
  get [ErrorTypeId](): ErrorTypeId {
    return ErrorTypeId
  }
  override get message(): string {
    // An import that cannot tell whose journal it reads names no saga.
    const whose = this.sagaId === "" ? "an imported journal" : `journal of saga ${this.sagaId}`
    return `${whose} is corrupted at seq ${this.seq}: ${this.reason}`
  }
}

/**
 * What is wrong with a journal that does not verify:
 * - `sequence`: an entry is missing or out of place (its `seq` is not the next one);
 * - `hash`: an entry's hash does not match its content chained to the entry before it (the entry
 *   was edited, or forged over another predecessor);
 * - `unsigned` / `signature`: a journal key is configured and the entry carries no MAC, or one that
 *   does not verify under any configured key;
 * - `truncated`: the saga's row says the journal goes on past its last entry, to a hash the journal
 *   no longer holds (entries were deleted);
 * - `row`: the saga's row names another last entry than the journal's (the row was edited: its
 *   digest, or its revision while its digest still names the journal's last entry; or entries were
 *   added behind its back);
 * - `undecodable`: a stored entry no longer decodes (a phase or a column edited out of shape);
 * - `approval`: an approval decision the store holds is not the one the journal holds, or is not
 *   signed by the journal key, or the store's record of the request was edited so that it names no
 *   decision the store wrote (`Approval.ApprovalTampered`).
 *
 * @since 0.2.0
 * @category models
 */
export const TamperProblem = Schema.Literal(
  "sequence",
  "hash",
  "unsigned",
  "signature",
  "truncated",
  "row",
  "undecodable",
  "approval"
)

/**
 * @since 0.2.0
 * @category models
 */
export type TamperProblem = typeof TamperProblem.Type

/**
 * A saga's journal does not verify: it was changed behind the library's back. The engine refuses
 * to act on it: nothing ran and nothing was written. `seq` is the first entry that does not fit.
 *
 * @since 0.2.0
 * @category errors
 */
export class JournalTampered extends Schema.TaggedError<JournalTampered>("effect-saga/JournalTampered")(
  "JournalTampered",
  { sagaId: Schema.String, seq: Schema.Int, problem: TamperProblem, reason: Schema.String }
) {
  /** @since 0.2.0 */
  get [ErrorTypeId](): ErrorTypeId {
    return ErrorTypeId
  }
  override get message(): string {
    return `journal of saga ${this.sagaId} does not verify at seq ${this.seq} (${this.problem}): ${this.reason}; nothing was run or written`
  }
}

/**
 * No saga with that id is in the journal.
 *
 * @since 0.1.0
 * @category errors
 */
export class SagaNotFound extends Schema.TaggedError<SagaNotFound>("effect-saga/SagaNotFound")("SagaNotFound", {
  sagaId: Schema.String
}) {
  /** @since 0.2.0 */
  get [ErrorTypeId](): ErrorTypeId {
    return ErrorTypeId
  }
  override get message(): string {
    return `no saga ${named(this.sagaId)} in the journal`
  }
}
