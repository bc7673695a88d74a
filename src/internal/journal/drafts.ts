/** Building the drafts of journal entries: a phase and its payload, encoded by `payloads.ts`. */
import type { Draft } from "../../Journal.js"
import type { PayloadOf, SagaPhase, StepPhase } from "./payloads.js"
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
