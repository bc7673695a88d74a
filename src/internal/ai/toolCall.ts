import * as FiberRef from "effect/FiberRef"
import type { AwaitingApproval } from "../../Agent.js"
import type { ApprovalPending } from "../../SagaError.js"

/**
 * The call a handler runs for: a model's tool call (set by the journaled model while it resolves a
 * turn's tool calls, so that the step is keyed by the call's id) or an MCP client's (no id). Such a
 * call defers a pending approval: the handler answers `ApprovalPending` into `pending` instead of
 * halting the saga, so the caller can tell the model. `journaled` is set by a handler that ran as a
 * saga step, so that a handler that did not (a plain `@effect/ai` handler) is caught.
 */
export interface ToolCall {
  readonly id: string | undefined
  journaled: boolean
  pending: ApprovalPending | undefined
}

/** A fresh cell for one call. */
export const toolCall = (id: string | undefined): ToolCall => ({ id, journaled: false, pending: undefined })

/** The tool result of a call that awaits approval. */
export const awaitingApproval: AwaitingApproval = {
  status: "awaiting-approval",
  message:
    "This call needs a person's approval before it runs. It has not run yet; it runs once approved. " +
    "Do not call it again."
}

/** Whether a tool result says its call awaits approval. */
export const isAwaitingApproval = (u: unknown): u is AwaitingApproval =>
  typeof u === "object" && u !== null && (u as { status?: unknown }).status === "awaiting-approval"

/** The call being resolved, if any. */
export const currentToolCall: FiberRef.FiberRef<ToolCall | undefined> = FiberRef.unsafeMake<ToolCall | undefined>(
  undefined
)

/**
 * Where `Agent.loop` collects the calls of a conversation that await approval (so that it settles
 * them before the model's final answer).
 */
export const pendingCalls: FiberRef.FiberRef<Array<PendingCall> | undefined> = FiberRef.unsafeMake<
  Array<PendingCall> | undefined
>(undefined)

/** A model's tool call that awaits approval. */
export interface PendingCall {
  readonly callId: string
  readonly toolName: string
  readonly stepId: string
}
