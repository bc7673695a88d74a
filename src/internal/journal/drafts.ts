/** Building the drafts of journal entries: a phase and its payload, encoded by `payloads.ts`. */
import type { Draft } from "../../Journal.js"
import type { JournaledReceipt, PayloadOf, SagaPhase, StepPhase } from "./payloads.js"
import { encodePayload } from "./payloads.js"

/** The step an entry is about. */
export interface StepRef {
  readonly stepId: string
  readonly toolName: string
}

/** A step's entry: `phase` with its payload, and the call's encoded input where the phase records it. */
export const stepDraft = <P extends StepPhase>(
  step: StepRef,
  phase: P,
  payload: PayloadOf<P>,
  input: string | null = null
): Draft => ({
  stepId: step.stepId,
  toolName: step.toolName,
  phase,
  input,
  payload: encodePayload(phase, payload)
})

/** A saga-level entry: the saga's start, halts and ends. */
export const sagaDraft = <P extends SagaPhase>(phase: P, payload: PayloadOf<P>): Draft => ({
  stepId: null,
  toolName: null,
  phase,
  input: null,
  payload: encodePayload(phase, payload)
})

/**
 * A draft a step's own path builds (`intentDraft`, `executedDraft`), which keeps its payload as its
 * entry decodes: the writer takes it instead of parsing again the text it has just written. The
 * payload is a private field, so that nothing that reads a draft's fields or copies it sees it.
 */
class OwnDraft implements Draft {
  readonly #decoded: object
  constructor(
    readonly stepId: string,
    readonly toolName: string,
    readonly phase: "INTENT" | "EXECUTED",
    readonly input: string | null,
    readonly payload: string,
    decoded: object
  ) {
    this.#decoded = decoded
  }

  static decodedOf(draft: Draft): unknown {
    return #decoded in draft ? (draft as OwnDraft).#decoded : undefined
  }
}

/** The decoded payload of a draft built by `intentDraft` or `executedDraft`, else `undefined`. */
export const ownPayloadOf = (draft: Draft): unknown => OwnDraft.decodedOf(draft)

/** What a call's `INTENT` says (see `payloads.ts`). */
export interface IntentFields {
  readonly idempotencyKey: string
  readonly attempt: number
  readonly deferred: boolean
  readonly capabilities: ReadonlyArray<string> | undefined
  /** The tool is a read: written only then, so that every other `INTENT` is the text it always was. */
  readonly changesNothing: boolean
  /** The tool declares an undo (written only then). */
  readonly undo: boolean
  /** The tool's undo needs the provider's receipt (written only then). */
  readonly receiptRequired: boolean
  /** A failure of the call is the program's to handle (`onFailure: "continue"`; written only then). */
  readonly continues: boolean
  /** The tool declares `retryMode: "idempotency-key"`: a resume runs it again by its key (written only then). */
  readonly retriesByKey: boolean
}

/**
 * A call's `INTENT`, its text exactly what `encodePayload` writes (every field is typed and the
 * phase's schema transforms nothing, so the schema is not run on the step's path: `payloads.test.ts`
 * checks both agree).
 */
export const intentDraft = (step: StepRef, fields: IntentFields, input: string): Draft => {
  const payload: { -readonly [K in keyof NonNullable<PayloadOf<"INTENT">>]: NonNullable<PayloadOf<"INTENT">>[K] } = {
    idempotencyKey: fields.idempotencyKey,
    attempt: fields.attempt
  }
  if (fields.deferred) payload.deferred = true
  if (fields.capabilities !== undefined) payload.capabilities = fields.capabilities
  if (fields.changesNothing) payload.changesNothing = true
  if (fields.undo) payload.undo = true
  if (fields.receiptRequired) payload.receiptRequired = true
  if (fields.continues) payload.onFailure = "continue"
  if (fields.retriesByKey) payload.retriesByKey = true
  return new OwnDraft(step.stepId, step.toolName, "INTENT", input, JSON.stringify(payload), payload)
}

/** What a call's `EXECUTED` says: its result as `resultJson` (the tool's schema encoded it), its receipt, `changesNothing`. */
export interface ExecutedFields {
  readonly resultJson: string
  readonly receipt: JournaledReceipt | undefined
  readonly changesNothing: boolean
}

/**
 * A call's `EXECUTED`, its text exactly what `encodePayload` writes for the same payload, composed
 * around the result's JSON text instead of serializing the result again (`payloads.test.ts` checks
 * both agree).
 */
export const executedDraft = (step: StepRef, fields: ExecutedFields): Draft => {
  const payload: { -readonly [K in keyof PayloadOf<"EXECUTED">]: PayloadOf<"EXECUTED">[K] } = {
    result: JSON.parse(fields.resultJson)
  }
  let text = `{"result":${fields.resultJson}`
  if (fields.receipt !== undefined) {
    payload.receipt = fields.receipt
    text += `,"receipt":${JSON.stringify(fields.receipt)}`
  }
  if (fields.changesNothing) {
    payload.changesNothing = true
    text += `,"changesNothing":true`
  }
  return new OwnDraft(step.stepId, step.toolName, "EXECUTED", null, `${text}}`, payload)
}
