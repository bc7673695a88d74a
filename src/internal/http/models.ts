/**
 * What the API's requests and responses carry, as Schemas (`SagaApi` re-exports them): the OpenAPI
 * document is generated from them, and the client decodes with them.
 */
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { CompensationReport, UndoOutcome } from "../../CompensationReport.js"
import { Entry, SagaRecord, SagaStatus, TamperProblem } from "../../Journal.js"
import { cutoff } from "../util/isoTime.js"

/** ISO-8601 text, refused unless `cutoff` reads a time in it; decoded as `decoded` says. */
function isoTime(decoded: (sent: string, time: string) => string) {
  return Schema.transformOrFail(Schema.String, Schema.String, {
    strict: true,
    decode: (text, _, ast) =>
      Either.match(cutoff(text), {
        onLeft: (reason) => ParseResult.fail(new ParseResult.Type(ast, text, reason)),
        onRight: (time) => ParseResult.succeed(decoded(text, time))
      }),
    encode: ParseResult.succeed
  }).annotations({ identifier: "Instant", description: "an ISO-8601 time" })
}

/**
 * A time as ISO-8601 text, normalized to UTC (`2026-12-01T12:00:00.000Z`): a date (midnight UTC) or
 * a date and time with its zone (`2026-12-01T13:00+01:00`), read as the CLI and `Saga.list` read
 * times. Text that is not one (`soon`, `2025-02-30`, a time without its zone) is refused.
 *
 * @since 0.2.0
 * @category models
 */
export const Instant = isoTime((_, time) => time)

/**
 * An approval's `expiresAt`: refused as `Instant` refuses a time, but kept as it was sent, so that
 * a refusal quotes it as the caller wrote it; the command journals it as `Instant` reads it.
 */
const Expiry = isoTime((sent) => sent)

/**
 * Where a saga's journal breaks (`seq` is `null` for a row of the approvals table no entry backs).
 *
 * @since 0.2.0
 * @category models
 */
export const Tamper = Schema.Struct({
  seq: Schema.NullOr(Schema.Int),
  problem: TamperProblem,
  reason: Schema.String
})

/**
 * @since 0.2.0
 * @category models
 */
export type Tamper = typeof Tamper.Type

/**
 * A saga's row, whether its journal verifies (`tampered`), whether it is stuck (`stuck`: started
 * with `Saga.run`, and running or compensating with no live lease, or suspended and not taken since:
 * no worker drives it and no `Recovery` can), and whether it waits for a person (`needsHuman`:
 * compensation failed, needs attention, awaiting approval, tampered, or stuck).
 *
 * @since 0.2.0
 * @category models
 */
export const SagaSummary = Schema.Struct({
  ...SagaRecord.fields,
  tampered: Schema.NullOr(Tamper),
  /**
   * Stuck, as `effect-saga list` says (since 0.5.0; a server before that sends none, which the
   * typed client decodes as absent: not judged).
   */
  stuck: Schema.optional(
    Schema.Boolean.annotations({
      description:
        "no worker drives the saga and no Recovery can (started with Saga.run; running or compensating with no live lease, or suspended): run its program again, or compensate it"
    })
  ),
  needsHuman: Schema.Boolean
})

/**
 * @since 0.2.0
 * @category models
 */
export type SagaSummary = typeof SagaSummary.Type

/**
 * One page of `GET /api/sagas`: what needs a person first, then the most recently updated.
 *
 * @since 0.2.0
 * @category models
 */
export const SagaPage = Schema.Struct({
  sagas: Schema.Array(SagaSummary),
  total: Schema.Int,
  offset: Schema.Int,
  limit: Schema.Int
})

/**
 * @since 0.2.0
 * @category models
 */
export type SagaPage = typeof SagaPage.Type

/**
 * The run of an explicit undo asked of a saga's step (`compensateEffect`, journal id `runId`): the
 * saga's own journal is only read (its step stays `executed`, its `undo` `null`), so the run says what
 * came of it. `status` is the run's (`awaiting_approval` while its undo waits for its own approval,
 * and after it, until the undo is asked for again: `approved` then says so);
 * `undo` its answer as its step shows it (`null` while it has none); both `null`, and never taken as
 * a fact, when the run's journal does not verify (`tampered`).
 *
 * @since 0.5.0
 * @category models
 */
export const ExplicitUndo = Schema.Struct({
  runId: Schema.String,
  status: Schema.NullOr(SagaStatus),
  undo: Schema.NullOr(Schema.Union(UndoOutcome, Schema.Literal("started"))),
  undoDetail: Schema.optional(Schema.String),
  /** `true` when the undo's own approval is journaled and it has not run: it runs when asked for again. */
  approved: Schema.optional(Schema.Literal(true)),
  /** The expiry of that approval, once it has lapsed (then `approved` is absent): asked for again, the run answers `failed`. */
  approvalLapsedAt: Schema.optional(Schema.String),
  tampered: Schema.NullOr(Tamper)
})

/**
 * @since 0.5.0
 * @category models
 */
export type ExplicitUndo = typeof ExplicitUndo.Type

/**
 * A step as the journal says it stands (see `Saga.StepStatus`); `undo` is `null` when none was asked for.
 *
 * @since 0.2.0
 * @category models
 */
export const Step = Schema.Struct({
  stepId: Schema.String,
  toolName: Schema.String,
  effectId: Schema.String,
  state: Schema.Literal(
    "executed",
    "failed",
    "unknown",
    "in_flight",
    "not_started",
    "awaiting_approval",
    "approved",
    "refused"
  ),
  undo: Schema.NullOr(Schema.Union(UndoOutcome, Schema.Literal("started"))),
  /** What its undo left: a partial undo's `remaining`, why one failed or was unavailable (since 0.5.0). */
  undoDetail: Schema.optional(Schema.String),
  /** A read: its `unknown` state is nothing to resolve (since 0.4.0). */
  changesNothing: Schema.optional(Schema.Boolean),
  /** Why its outcome is `unknown`, as the saga journaled when it stopped on it (since 0.5.0). */
  unknownReason: Schema.optional(Schema.String),
  /** Its tool's undo needs the provider's receipt: resolved as applied, give it (`receipt`) (since 0.5.0). */
  receiptRequired: Schema.optional(Schema.Boolean),
  /** Its tool retries by key: with its outcome `unknown`, a resume runs it again with the same key (since 0.5.0). */
  retriesByKey: Schema.optional(Schema.Boolean),
  /** It waited for an approval before it ran, as only an irreversible tool's step does: it has no undo (since 0.5.0). */
  irreversible: Schema.optional(Schema.Boolean),
  /**
   * The run of the explicit undo asked of this step, if one was: only `GET /api/sagas/:sagaId` reads
   * it (since 0.5.0; a server before that sends none, which the typed client decodes as absent).
   */
  explicitUndo: Schema.optional(ExplicitUndo)
})

/**
 * @since 0.2.0
 * @category models
 */
export type Step = typeof Step.Type

/**
 * A saga: its row and mark, its steps (none shown for a tampered saga: the journal would decide
 * them; a step an explicit undo was asked of with its run, `explicitUndo`), and its entries with
 * every receipt replaced by a placeholder.
 *
 * @since 0.2.0
 * @category models
 */
export const SagaDetail = Schema.Struct({
  saga: SagaSummary,
  steps: Schema.Array(Step),
  entries: Schema.Array(Entry)
})

/**
 * @since 0.2.0
 * @category models
 */
export type SagaDetail = typeof SagaDetail.Type

/**
 * The answer of `GET /api/sagas/:sagaId/verify`.
 *
 * @since 0.2.0
 * @category models
 */
export const Verification = Schema.Struct({
  sagaId: Schema.String,
  intact: Schema.Boolean,
  tampered: Schema.NullOr(Tamper),
  revision: Schema.Int,
  digest: Schema.String
})

/**
 * @since 0.2.0
 * @category models
 */
export type Verification = typeof Verification.Type

/**
 * An approval request waiting for a decision: the exact input the step will send and its SHA-256
 * as the saga's journal holds them, and the saga's `revision`/`digest` to decide on. `settled`
 * (since 0.5.0): for a request of an explicit undo's run, why nothing is left to decide on it (the
 * saga's own compensation has reached the step since the run asked: asked again, the run answers
 * what the saga's did and withdraws the request), else `null`.
 *
 * @since 0.2.0
 * @category models
 */
export const PendingApproval = Schema.Struct({
  requestId: Schema.String,
  sagaId: Schema.String,
  stepId: Schema.String,
  toolName: Schema.String,
  input: Schema.NullOr(Schema.String),
  inputDigest: Schema.NullOr(Schema.String),
  requestedAt: Schema.String,
  revision: Schema.Int,
  digest: Schema.String,
  tampered: Schema.NullOr(Tamper),
  settled: Schema.NullOr(Schema.String)
})

/**
 * @since 0.2.0
 * @category models
 */
export type PendingApproval = typeof PendingApproval.Type

/**
 * The position of the saga the caller saw (`GET /api/sagas/:sagaId` shows it): a command is refused
 * with 409 if the saga has moved on since.
 *
 * @since 0.2.0
 * @category models
 */
export const Seen = Schema.Struct({
  revision: Schema.Int.pipe(Schema.nonNegative()),
  digest: Schema.String
})

/**
 * @since 0.2.0
 * @category models
 */
export type Seen = typeof Seen.Type

/**
 * `POST …/approve`: optionally until when (ISO-8601, as `Instant` reads it; kept as sent, and
 * journaled as `Instant` writes it).
 *
 * @since 0.2.0
 * @category models
 */
export const ApproveBody = Schema.Struct({
  ...Seen.fields,
  expiresAt: Schema.optional(Expiry)
})

/**
 * `POST …/reject`: why, in words.
 *
 * @since 0.2.0
 * @category models
 */
export const RejectBody = Schema.Struct({
  ...Seen.fields,
  reason: Schema.NonEmptyTrimmedString
})

/**
 * `POST …/renew`: the new expiry (as in `ApproveBody`), and optionally the input digest the caller saw.
 *
 * @since 0.2.0
 * @category models
 */
export const RenewBody = Schema.Struct({
  ...Seen.fields,
  expiresAt: Schema.optional(Expiry),
  inputDigest: Schema.optional(Schema.String)
})

/**
 * `POST …/resolve`: the step was `applied` (with its result as the tool's success schema encodes
 * it; `undone: true` once the saga began to compensate: it happened and its effect was undone by hand
 * since, `Saga.Resolution`'s `undone`) or `not-applied`, which carries no result (one sent with it is
 * refused, as the CLI refuses `--result` with `--not-applied`: it would be dropped).
 *
 * @since 0.2.0
 * @category models
 */
export const ResolveBody = Schema.Union(
  Schema.Struct({
    ...Seen.fields,
    outcome: Schema.Literal("applied"),
    result: Schema.optional(Schema.Unknown),
    undone: Schema.optional(Schema.Boolean),
    /**
     * The receipt the provider gave for the call, which its tool's undo needs (`receiptRequired`):
     * journaled as a tool's own receipt is, never sent back (since 0.5.0).
     */
    receipt: Schema.optional(Schema.String)
  }),
  Schema.Struct({
    ...Seen.fields,
    outcome: Schema.Literal("not-applied"),
    result: Schema.optional(
      Schema.Never.annotations({
        message: () => "a step resolved not-applied has no result: send outcome applied with its result, or no result",
        description: "absent: a step that did not take effect has no result"
      })
    ),
    undone: Schema.optional(
      Schema.Never.annotations({
        message: () =>
          "undone goes with the outcome applied only (the call happened, and its effect was undone by hand since)",
        description: "absent: a step that did not take effect was not undone"
      })
    ),
    receipt: Schema.optional(
      Schema.Never.annotations({
        message: () => "receipt goes with the outcome applied only (a call that did not take effect has no receipt)",
        description: "absent: a step that did not take effect has no receipt"
      })
    )
  })
)

/**
 * What a command did: `changed` is `false` when it was an exact replay of an earlier one (nothing
 * written), and `revision`/`digest` are the saga's position after it.
 *
 * @since 0.2.0
 * @category models
 */
export const Answer = Schema.Struct({
  sagaId: Schema.String,
  stepId: Schema.NullOr(Schema.String),
  changed: Schema.Boolean,
  message: Schema.String,
  revision: Schema.Int,
  digest: Schema.String
})

/**
 * @since 0.2.0
 * @category models
 */
export type Answer = typeof Answer.Type

/**
 * A command that compensated: its answer and the report of the undos.
 *
 * @since 0.2.0
 * @category models
 */
export const CompensationAnswer = Schema.Struct({
  ...Answer.fields,
  report: CompensationReport
})

/**
 * @since 0.2.0
 * @category models
 */
export type CompensationAnswer = typeof CompensationAnswer.Type

/**
 * What an explicit undo of one effect came to (see `Saga.EffectCompensation`).
 *
 * @since 0.2.0
 * @category models
 */
export const EffectUndo = Schema.Struct({
  effectId: Schema.String,
  runId: Schema.String,
  result: Schema.Literal("completed", "partial", "unavailable", "failed", "unknown", "awaiting_approval"),
  detail: Schema.NullOr(Schema.String)
})

/**
 * @since 0.2.0
 * @category models
 */
export type EffectUndo = typeof EffectUndo.Type

/**
 * The largest `limit` a page of `GET /api/sagas` or `GET /api/approvals` may ask for.
 *
 * @since 0.5.0
 * @category models
 */
export const MAX_LIMIT = 500

/**
 * The `limit` a page of `GET /api/sagas` or `GET /api/approvals` has when none is given.
 *
 * @since 0.5.0
 * @category models
 */
export const DEFAULT_LIMIT = 50

/**
 * A whole number as a query sends it: decimal digits and nothing else. `Number` would also read
 * `0x10`, `1e2` and ` 50` (as 16, 100 and 50): a client that sends them has a bug to hear about.
 *
 * @since 0.5.0
 * @category models
 */
export const DigitsFromString = Schema.String.pipe(
  Schema.pattern(/^[0-9]+$/, {
    message: (issue) => `Expected a whole number in decimal digits, actual ${JSON.stringify(issue.actual)}`
  }),
  Schema.compose(Schema.NumberFromString)
)

/**
 * A page's `offset` as a query sends it: a whole number from 0 to `Number.MAX_SAFE_INTEGER`. Past
 * that, a number is no longer exact (9007199254740993 reads as …992), and the answer says so rather
 * than that it is no integer.
 *
 * @since 0.5.0
 * @category models
 */
export const OffsetFromString = DigitsFromString.pipe(
  Schema.lessThanOrEqualTo(Number.MAX_SAFE_INTEGER, {
    message: (issue) =>
      `Expected a whole number up to ${Number.MAX_SAFE_INTEGER}, the largest accepted, actual ${String(issue.actual)}`
  }),
  Schema.int(),
  Schema.nonNegative()
)

const statuses = SagaStatus.literals.join("|")

/**
 * How a query parameter reads in the OpenAPI document: the JSON Schema of the value a client
 * sends (an integer for a page's numbers, not the digits' pattern) and what it means.
 */
const queryParameter =
  (jsonSchema: object, description: string) =>
  <S extends Schema.Schema.Any>(schema: S): S =>
    schema.annotations({ jsonSchema: { ...jsonSchema, description } }) as S

/**
 * The filters of `GET /api/sagas`: statuses (comma-separated), only what needs a person, only
 * what awaits an approval, only sagas finished before a time; and the page.
 *
 * @since 0.2.0
 * @category models
 */
export const ListParams = Schema.Struct({
  status: Schema.optional(
    Schema.split(",").pipe(
      Schema.compose(Schema.Array(SagaStatus)),
      queryParameter(
        { type: "string", pattern: `^(${statuses})(,(${statuses}))*$` },
        `statuses to list, comma-separated (${SagaStatus.literals.join(", ")}); default every status`
      )
    )
  ),
  needsHuman: Schema.optional(Schema.BooleanFromString),
  awaitingApproval: Schema.optional(Schema.BooleanFromString),
  finishedBefore: Schema.optional(Instant),
  search: Schema.optional(Schema.String),
  offset: Schema.optional(
    OffsetFromString.pipe(
      queryParameter({ type: "integer", minimum: 0 }, "sagas to skip, in decimal digits (default 0)")
    )
  ),
  limit: Schema.optional(
    DigitsFromString.pipe(
      Schema.int(),
      Schema.between(1, MAX_LIMIT),
      queryParameter(
        { type: "integer", minimum: 1, maximum: MAX_LIMIT },
        `sagas to list, in decimal digits (default ${DEFAULT_LIMIT}, at most ${MAX_LIMIT})`
      )
    )
  )
})

/**
 * @since 0.2.0
 * @category models
 */
export type ListParams = typeof ListParams.Type

/**
 * The page of `GET /api/approvals`: `offset` and `limit` count sagas with a request waiting (a
 * saga's requests are never split between pages); the answer's `X-Total-Count` header counts them all.
 *
 * @since 0.5.0
 * @category models
 */
export const InboxParams = Schema.Struct({
  offset: ListParams.fields.offset,
  limit: ListParams.fields.limit
})

/**
 * @since 0.5.0
 * @category models
 */
export type InboxParams = typeof InboxParams.Type
