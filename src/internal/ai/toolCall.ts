import type * as Tool from "@effect/ai/Tool"
import type * as Toolkit from "@effect/ai/Toolkit"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"
import type { AwaitingApproval, NotRun } from "../../Agent.js"
import type { ApprovalPending, ApprovalRefused } from "../../SagaError.js"

/**
 * The call a handler runs for: a model's tool call (set by the journaled model while it resolves a
 * turn's tool calls, so that the step is keyed by the call's id) or an MCP client's (no id). Such a
 * call defers a pending approval: the handler answers `ApprovalPending` into `pending` instead of
 * halting the saga, so the caller can tell the model; an irreversible call the saga refused without
 * halting (it was bound to compensate) answers `ApprovalRefused` into `refused`. `journaled` is set
 * by a handler that ran as a saga step, so that a handler that did not (a plain `@effect/ai`
 * handler) is caught. `traced` and `parentSpan` are how the caller traced (see `handleUntraced`).
 */
export interface ToolCall {
  readonly id: string | undefined
  journaled: boolean
  pending: ApprovalPending | undefined
  refused: ApprovalRefused | undefined
  traced: boolean
  parentSpan: Option.Option<Tracer.AnySpan>
}

/** A fresh cell for one call. */
export const toolCall = (id: string | undefined): ToolCall => ({
  id,
  journaled: false,
  pending: undefined,
  refused: undefined,
  traced: true,
  parentSpan: Option.none()
})

/** The tool result of a call that awaits approval. */
export const awaitingApproval: AwaitingApproval = {
  status: "awaiting-approval",
  message:
    "This call needs a person's approval before it runs. It has not run yet; it runs once approved. " +
    "Do not call it again."
}

/** The tool result of a call the saga refused to run, saying why (see `ApprovalRefused`'s `reason`). */
export const notRun = (refused: ApprovalRefused): NotRun => ({
  status: "not-run",
  // The reason says `not run: …` and why (see engine/boundToUndo.ts).
  message: `This call was ${refused.reason}. Do not call it again.`
})

/** Whether a tool result says its call was not run. */
export const isNotRun = (u: unknown): u is NotRun =>
  typeof u === "object" && u !== null && (u as { status?: unknown }).status === "not-run"

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

/**
 * Where spans go while `Toolkit.handle` runs untraced: what it annotates its span with (the call's
 * parameters) would otherwise land on the caller's span, the nearest one made.
 */
const discarded: Tracer.Span = {
  _tag: "Span",
  name: "effect-saga/ai: untraced",
  spanId: "untraced",
  traceId: "untraced",
  parent: Option.none(),
  context: Context.empty(),
  status: { _tag: "Started", startTime: BigInt(0) },
  attributes: new Map(),
  links: [],
  sampled: false,
  kind: "internal",
  end: () => {},
  attribute: () => {},
  event: () => {},
  addLinks: () => {}
}

/**
 * Runs a call through `Toolkit.handle` (which decodes the parameters, runs the handler, checks and
 * encodes its result) without the span `Toolkit.handle` opens: that span carries the call's
 * parameters as an attribute, and its status quotes them when they do not decode. The handler
 * (`handlers.wrap`) traces again as the caller did (`asCaller`).
 */
export const handleUntraced = (
  toolkit: Toolkit.WithHandler<Record<string, Tool.Any>>,
  name: string,
  params: unknown,
  cell: ToolCall
): Effect.Effect<Tool.HandlerResult<Tool.Any>, unknown, unknown> =>
  Effect.flatMap(
    Effect.zip(FiberRef.get(FiberRef.currentTracerEnabled), Effect.serviceOption(Tracer.ParentSpan)),
    ([traced, parentSpan]) => {
      cell.traced = traced
      cell.parentSpan = parentSpan
      const handle = toolkit.handle as unknown as (
        name: string,
        params: unknown
      ) => Effect.Effect<any, unknown, unknown>
      return handle(name, params).pipe(
        Effect.locally(currentToolCall, cell),
        Effect.withParentSpan(discarded),
        Effect.withTracerEnabled(false)
      )
    }
  )

/** `effect` traced as the caller of `handleUntraced` was: spans on or off, under the caller's span. */
export const asCaller =
  (cell: ToolCall) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    effect.pipe(
      Effect.mapInputContext((context: Context.Context<R>) =>
        Option.match(cell.parentSpan, {
          onNone: () => Context.omit(Tracer.ParentSpan)(context) as Context.Context<R>,
          onSome: (span) => Context.add(context, Tracer.ParentSpan, span)
        })
      ),
      Effect.withTracerEnabled(cell.traced)
    )
