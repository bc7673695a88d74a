/**
 * The payload each phase journals, one Schema per phase, encoded and decoded here and nowhere else.
 *
 * NOTE: an entry's hash covers the payload's JSON text, so the text is part of the format: keys are
 * written in the order the payload's value holds them (a decoded payload keeps the stored order),
 * absent and `undefined` fields are omitted, nothing is reordered or added. Fields a stored payload
 * may lack are optional; a payload that does not fit its phase's schema is `JournalCorrupted`.
 */
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import { CompensationReport } from "../../CompensationReport.js"
import type { Entry, Phase } from "../../Journal.js"
import { JournalCorrupted } from "./errors.js"

/** A JSON value the engine encoded with a tool's or a definition's schema: a result, an input, an error. */
const Json = Schema.Unknown.annotations({ identifier: "Json", arbitrary: () => (fc) => fc.jsonValue() })

/**
 * A receipt sealed under a receipt key (AES-256-GCM); one without its `tag` never opens. A receipt
 * that is neither text nor an object is told so (the union's last member would be blamed alone,
 * as if a receipt had to be sealed).
 */
const SealedReceipt = Schema.Struct({
  sealed: Schema.Literal("aes-256-gcm"),
  kid: Schema.String,
  iv: Schema.String,
  data: Schema.String,
  tag: Schema.optional(Schema.String)
}).annotations({
  // An array passes as an object: it is told so too, not that it lacks `sealed`.
  message: (issue) => ({ message: "is neither text nor a sealed receipt", override: Array.isArray(issue.actual) })
})

/** A step's receipt at rest: the plain text, or sealed. */
const Receipt = Schema.Union(Schema.String, SealedReceipt)

/**
 * `INTENT`: the forward call's idempotency key and attempt; `deferred` where the program settled it;
 * the `capabilities` the call was granted (a manifest binding's grants), where it declares any;
 * `changesNothing` where the tool is a read (an `INTENT` without it, as every one written before it
 * was, is a call that may have changed something); `undo` where the tool declared an undo when it
 * was called (since 0.5.0: a tool registered later without one cannot pass the step as needing none);
 * `receiptRequired` where its undo needs the provider's receipt (since 0.5.0: an operator resolving
 * the step as applied is told to give it, whether or not the tool is registered); `onFailure:
 * "continue"` where a failure of the call is the program's to handle (since 0.5.0: resolved as not
 * applied, it does not taint the saga either); `retriesByKey` where the tool declared `retryMode:
 * "idempotency-key"` (since 0.5.0: an operator told its outcome is unknown is told that a resume
 * runs it again by its key).
 */
const Intent = Schema.Struct({
  idempotencyKey: Schema.String,
  attempt: Schema.Int,
  deferred: Schema.optional(Schema.Boolean),
  capabilities: Schema.optional(Schema.Array(Schema.String)),
  changesNothing: Schema.optional(Schema.Boolean),
  undo: Schema.optional(Schema.Boolean),
  receiptRequired: Schema.optional(Schema.Boolean),
  onFailure: Schema.optional(Schema.Literal("continue")),
  retriesByKey: Schema.optional(Schema.Boolean)
})

/** `EXECUTED`: the encoded result, the receipt, `changesNothing`, or who resolved an unknown outcome. */
const Executed = Schema.Struct({
  result: Json,
  receipt: Schema.optional(Receipt),
  changesNothing: Schema.optional(Schema.Boolean),
  resolvedBy: Schema.optional(Schema.String),
  principal: Schema.optional(Schema.String)
})

/**
 * `FAILED`: what failed, whether a defect (a read's, or any call's in journals written before a call
 * that dies was left unknown), `taints: false`, the encoded error, or who resolved it.
 */
const Failed = Schema.Struct({
  description: Schema.String,
  defect: Schema.Boolean,
  taints: Schema.optional(Schema.Boolean),
  error: Schema.optional(Json),
  resolvedBy: Schema.optional(Schema.String),
  principal: Schema.optional(Schema.String)
})

/** `AWAITING_APPROVAL`: the digest of the input to approve; `deferred` when the program went on. */
const AwaitingApproval = Schema.Struct({
  inputDigest: Schema.String,
  deferred: Schema.optional(Schema.Boolean)
})

/** `APPROVED`: the decision (who, when, which input, until when), renewals, the principal of a command. */
const Approved = Schema.Struct({
  _tag: Schema.Literal("Approved"),
  by: Schema.String,
  at: Schema.String,
  inputDigest: Schema.String,
  expiresAt: Schema.optional(Schema.String),
  renewedBy: Schema.optional(Schema.String),
  renewedAt: Schema.optional(Schema.String),
  principal: Schema.optional(Schema.String)
})

/**
 * `REJECTED`: why; a decision's rejection also says who and when (with the store's `mac` when it
 * signed it, or the principal of the command), a withdrawal says who; the engine's own refusal only why.
 * `boundToUndo`: refused because a failure had bound the saga to compensate (an irreversible call
 * never runs then); a call that does not halt the saga is answered that it did not run, every replay.
 */
const Rejected = Schema.Struct({
  _tag: Schema.optional(Schema.Literal("Rejected")),
  by: Schema.optional(Schema.String),
  at: Schema.optional(Schema.String),
  reason: Schema.String,
  mac: Schema.optional(Schema.String),
  principal: Schema.optional(Schema.String),
  boundToUndo: Schema.optional(Schema.Boolean)
})

/** `EXPIRED`: when the approval lapsed. */
const Expired = Schema.Struct({ reason: Schema.String })

/** `COMPENSATING`: the undo's idempotency key; `capabilities` what it was allowed, where its tool declares it (since 0.5.0). */
const Compensating = Schema.Struct({
  idempotencyKey: Schema.String,
  capabilities: Schema.optional(Schema.Array(Schema.String))
})

/** An undo's outcome: why, when there is more to say than the phase. */
const UndoReason = Schema.NullOr(Schema.Struct({ reason: Schema.String }))

/** `COMPENSATION_PARTIAL`: what the undo left behind. */
const UndoRemaining = Schema.NullOr(Schema.Struct({ remaining: Schema.String }))

/** A saga started from a definition: its name and encoded input. */
const Origin = Schema.Struct({ definition: Schema.String, input: Json })

/** The run of an explicit undo, started for one effect. */
const ExplicitStart = Schema.Struct({ effectId: Schema.String })

/**
 * The steps whose last `INTENT` has no outcome because the run was interrupted with none of its
 * calls in flight: it never started, or every attempt it made failed (a typed failure, not
 * `Outcome.unknown`) and it was interrupted waiting to try again. Nothing ran that may have changed
 * anything: the step is not unknown. The saga-level entry that ends such a run journals it
 * (`SAGA_SUSPENDED`, `SAGA_COMPENSATING`, `SAGA_NEEDS_ATTENTION`, `SAGA_COMPLETED`): no phase of
 * its own, and a journal that never holds it reads as before.
 */
const NotStarted = Schema.Array(Schema.String)

/** What an explicit undo came to, as its run's last entry says. */
const ExplicitAnswer = Schema.Struct({
  effectId: Schema.optional(Schema.String),
  outcome: Schema.Literal("completed", "partial", "unavailable", "failed", "unknown"),
  detail: Schema.optional(Schema.String)
})

/**
 * `SAGA_NEEDS_ATTENTION`: the steps whose outcome is unknown; `unreached` marks one the run's
 * program succeeded without reaching (a changed program: it cannot replay the step once it has an
 * outcome). A journal that never holds it reads as before.
 */
const NeedsAttention = Schema.Struct({
  unknown: Schema.Array(
    Schema.Struct({
      stepId: Schema.String,
      toolName: Schema.String,
      reason: Schema.String,
      unreached: Schema.optional(Schema.Literal(true))
    })
  ),
  notStarted: Schema.optional(NotStarted)
})

/** The schema of every phase's payload (`null` where the phase journals none). */
export const schemas = {
  INTENT: Schema.NullOr(Intent),
  EXECUTED: Executed,
  FAILED: Failed,
  AWAITING_APPROVAL: AwaitingApproval,
  APPROVED: Approved,
  REJECTED: Rejected,
  EXPIRED: Expired,
  COMPENSATING: Schema.NullOr(Compensating),
  COMPENSATED: UndoReason,
  COMPENSATION_PARTIAL: UndoRemaining,
  COMPENSATION_FAILED: UndoReason,
  COMPENSATION_UNKNOWN: UndoReason,
  SKIPPED: UndoReason,
  SAGA_STARTED: Schema.NullOr(Schema.Union(Origin, ExplicitStart)),
  SAGA_RESUMED: Schema.Null,
  SAGA_COMPLETED: Schema.NullOr(Schema.Union(ExplicitAnswer, Schema.Struct({ notStarted: NotStarted }))),
  SAGA_COMPENSATING: Schema.Struct({ cause: Schema.String, notStarted: Schema.optional(NotStarted) }),
  SAGA_COMPENSATED: CompensationReport,
  SAGA_COMPENSATION_FAILED: Schema.Union(CompensationReport, ExplicitAnswer),
  SAGA_AWAITING_APPROVAL: Schema.Struct({ stepId: Schema.String, requestId: Schema.String }),
  SAGA_NEEDS_ATTENTION: Schema.Union(NeedsAttention, ExplicitAnswer),
  SAGA_SUSPENDED: Schema.NullOr(Schema.Struct({ notStarted: NotStarted }))
} satisfies { readonly [P in Phase]: Schema.Schema<any, any> }

/** The steps a saga-level entry journals as not started (see `NotStarted`), if it names any. */
export const notStartedIn = (entry: Recorded): ReadonlyArray<string> | undefined =>
  entry.stepId === null && entry.payload !== null && typeof entry.payload === "object" && "notStarted" in entry.payload
    ? entry.payload.notStarted
    : undefined

/** The payload of phase `P` (a union of payloads for a union of phases). */
export type PayloadOf<P extends Phase> = P extends Phase ? (typeof schemas)[P]["Type"] : never

/** The phases of a saga itself. */
export type SagaPhase = Extract<Phase, `SAGA_${string}`>

/** The phases of a step. */
export type StepPhase = Exclude<Phase, SagaPhase>

/** The phases that record how a step's undo ended. */
export type UndoPhase =
  | "COMPENSATED"
  | "COMPENSATION_PARTIAL"
  | "COMPENSATION_FAILED"
  | "COMPENSATION_UNKNOWN"
  | "SKIPPED"

/** What an explicit undo came to (the `outcome` of its run's answer). */
export type ExplicitOutcome = (typeof ExplicitAnswer)["Type"]["outcome"]

/**
 * A receipt as an `EXECUTED` payload holds it: plain text, or sealed (`{ sealed, kid, iv, data, tag }`).
 *
 * @since 0.2.0
 * @category payloads
 */
export type JournaledReceipt = (typeof Receipt)["Type"]

/**
 * The `EXECUTED` payload, its fields in the order every writer journals them: the result, then the
 * receipt and `changesNothing` of a run, or who resolved an unknown outcome.
 */
export const executed = (fields: PayloadOf<"EXECUTED">): PayloadOf<"EXECUTED"> => ({
  result: fields.result,
  receipt: fields.receipt,
  changesNothing: fields.changesNothing,
  resolvedBy: fields.resolvedBy,
  principal: fields.principal
})

/** Whether `phase` is one the journal knows (has a payload schema for). */
export const isPhase = (phase: string): phase is Phase => Object.hasOwn(schemas, phase)

/** Keys are kept in the order the value has them: the stored text is what the hash covers. */
const parseOptions = { propertyOrder: "original", onExcessProperty: "ignore", exact: true } as const

const schemaOf = (phase: Phase) => schemas[phase] as unknown as Schema.Schema<unknown, unknown>

/** The phases whose schema takes a `null` payload (the engine's saga-level markers mostly journal none). */
const takesNull = new Set((Object.keys(schemas) as Array<Phase>).filter((phase) => Schema.is(schemaOf(phase))(null)))

/**
 * The payload as the journal stores it: JSON text, or `null`. A payload that does not fit its
 * phase's schema is a defect of the code that built it.
 */
export const encodePayload = <P extends Phase>(phase: P, payload: PayloadOf<P>): string | null => {
  if (payload === null && takesNull.has(phase)) return null
  const encoded = Schema.encodeSync(schemaOf(phase))(payload, parseOptions)
  return encoded === null ? null : JSON.stringify(encoded)
}

/**
 * A stored payload decoded with its phase's schema, or why it does not decode: where and what was
 * expected, never the value found (a payload may hold a receipt, and the reason is shown to people).
 */
export const decodePayload = <P extends Phase>(phase: P, text: string | null): Either.Either<PayloadOf<P>, string> => {
  let parsed: unknown
  try {
    parsed = text === null ? null : JSON.parse(text)
  } catch {
    return Either.left("it is not JSON")
  }
  return Either.mapLeft(
    Schema.decodeUnknownEither(schemaOf(phase))(parsed, parseOptions) as Either.Either<
      PayloadOf<P>,
      ParseResult.ParseError
    >,
    withoutValues
  )
}

/** The first issue of a parse error, as its path and what was expected, without the value found. */
const withoutValues = (error: ParseResult.ParseError): string => {
  const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
  if (issue === undefined) return "it does not fit its schema"
  const where = issue.path.length === 0 ? "the payload" : issue.path.map(String).join(".")
  return `${where}: ${issue._tag === "Missing" ? "is missing" : expectedOf(issue.message)}`
}

/**
 * What a type issue's message expected, without the value found; a value that is no object where
 * an object's shape was expected is told so, not shown the whole shape.
 */
const expectedOf = (message: string): string => {
  const expected = message.replace(/,? actual[\s\S]*$/, "")
  return expected.startsWith("Expected {") && !/, actual \{/.test(message) ? "is not an object" : expected
}

/** An entry whose payload is decoded with its phase's schema. */
export type Recorded<P extends Phase = Phase> = P extends Phase
  ? Omit<Entry, "phase" | "payload"> & { readonly phase: P; readonly payload: PayloadOf<P> }
  : never

/** The entry with its payload decoded, or `JournalCorrupted` naming its saga and seq. */
export const decodeEntry = (entry: Entry): Either.Either<Recorded, JournalCorrupted> =>
  Either.match(decodePayload(entry.phase, entry.payload), {
    onLeft: (reason) =>
      Either.left(
        new JournalCorrupted({
          sagaId: entry.sagaId,
          seq: entry.seq,
          reason: `its ${entry.phase} payload does not decode: ${reason}`
        })
      ),
    onRight: (payload) => Either.right({ ...entry, payload } as Recorded)
  })

/**
 * The phases whose schema changes nothing between a payload and its encoded form (no
 * transformation anywhere, refinements allowed): for those, an entry's payload that this process
 * has just encoded (`encodePayload` checked it against the schema) decodes to what its text
 * parses to.
 */
const encodedAsIs = new Set(
  (Object.keys(schemas) as Array<Phase>).filter((phase) => {
    const ast = schemas[phase].ast
    return SchemaAST.encodedBoundAST(ast) === ast && SchemaAST.typeAST(ast) === ast
  })
)

/**
 * An entry whose payload this process has just encoded, decoded: its text parsed where the phase's
 * schema encodes payloads as they are (no need to check again what `encodePayload` checked), else
 * decoded as a stored one is.
 *
 * NOTE: a value the schema accepts but JSON does not keep (`NaN` in a number field) parses back
 * to another value here; a load of the stored text refuses it as `JournalCorrupted`.
 */
export const decodeOwnEntry = (entry: Entry): Either.Either<Recorded, JournalCorrupted> =>
  encodedAsIs.has(entry.phase)
    ? Either.right({ ...entry, payload: entry.payload === null ? null : JSON.parse(entry.payload) } as Recorded)
    : decodeEntry(entry)
