import * as Tool from "@effect/ai/Tool"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { Policy, PolicyOverride } from "../../Agent.js"
import type { CompensationContext, StepContext } from "../../Compensable.js"
import * as Compensable from "../../Compensable.js"
import { CurrentSaga } from "../../Saga.js"
import { ApprovalPending, ApprovalRefused } from "../../SagaError.js"
import { checkTool } from "../../Toolkit.js"
import type { StepSpec } from "../engine/spec.js"
import { spanAroundStep } from "../observability/spans.js"
import { stepKeyProblem } from "../util/identifier.js"
import { resolve } from "./policy.js"
import { sha256 } from "./promptLog.js"
import { asCaller, currentToolCall } from "./toolCall.js"

/** A handler as an agent's toolkit declares it: the tool's parameters and the step's context. */
export type AnyHandler = (params: any, step: StepContext) => Effect.Effect<any, any, any>

/** An undo as an agent's toolkit declares it. */
export type AnyUndo = (ctx: CompensationContext<any, any>) => Effect.Effect<unknown, unknown, any>

/** What an agent's toolkit was made with. */
export interface Declarations {
  readonly tools: Readonly<Record<string, Tool.Any>>
  readonly undo: Readonly<Record<string, AnyUndo | undefined>>
  readonly policy: Readonly<Record<string, PolicyOverride | undefined>>
  readonly onToolFailure: "compensate" | "continue"
}

const isNever = (schema: Schema.Schema.All): boolean => schema.ast._tag === "NeverKeyword"

/** Every tool's policy, by name. */
export const policiesOf = (declarations: Declarations): Record<string, Policy> => {
  const policies: Record<string, Policy> = {}
  for (const [name, tool] of Object.entries(declarations.tools)) {
    policies[name] = resolve(tool, declarations.undo[name] !== undefined, declarations.policy[name])
  }
  return policies
}

/** The step a tool call runs as: the tool's schemas, its policy, the handler and the undo. */
export const specOf = (
  declarations: Declarations,
  tool: Tool.Any,
  policy: Policy,
  handler: AnyHandler,
  context: Context.Context<never>
): StepSpec => {
  const override = declarations.policy[tool.name]
  const declared = declarations.undo[tool.name]
  // A read needs no undo: it is journaled as changing nothing, and compensation passes over it.
  const changesNothing = declared === undefined && policy.readonly && policy.reversibility !== "irreversible"
  const made: Compensable.Any = Compensable.make({
    timeout: override?.timeout,
    retry: override?.retry,
    maxPayloadBytes: override?.maxPayloadBytes,
    approvalTtl: override?.approvalTtl,
    receiptRequired: override?.receiptRequired,
    approveExplicitUndo: override?.approveExplicitUndo,
    name: tool.name,
    input: tool.parametersSchema as Schema.Schema<any, any>,
    success: tool.successSchema as Schema.Schema<any, any>,
    failure: isNever(tool.failureSchema) ? undefined : (tool.failureSchema as Schema.Schema<any, any>),
    reversibility: policy.reversibility,
    retryMode: policy.retryMode,
    execute: (params: unknown, step: StepContext) => Effect.provide(handler(params, step), context),
    compensate: declared,
    changesNothing,
    capabilities: override?.capabilities
  } as any)
  // A failure the model is told about does not taint the saga when the agent says so.
  const fedToModel = tool.failureMode === "return"
  return {
    ...made.spec,
    taintsOnFailure: !(fedToModel && declarations.onToolFailure === "continue"),
    declaredBy: declarations
  }
}

/** The OpenTelemetry GenAI `execute_tool` span of a model's or MCP client's call (only an MCP call has no id). */
const executeToolSpan = (toolName: string, callId: string | undefined) => ({
  kind: "internal" as const,
  captureStackTrace: false,
  attributes:
    callId === undefined
      ? { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": toolName }
      : { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": toolName, "gen_ai.tool.call.id": callId }
})

/**
 * What the step of a call answered inside its `execute_tool` span when its caller answers in its
 * stead: it awaits approval, or the saga refused to run it.
 */
const answeredByCaller: unique symbol = Symbol("effect-saga/ai/answeredByCaller")

/**
 * The step key of a model's tool call: its id, or, for an id that cannot be a step key (empty, over
 * `Compensable.MAX_STEP_KEY_BYTES`, holding a `/` or a control character: ids are the provider's
 * choice), `sha256-` and the first 32 hex digits of the id's SHA-256. Either is the same on every
 * replay: the journaled answer carries the same ids.
 */
export const stepKeyOf = (callId: string | undefined): string | undefined =>
  callId === undefined || stepKeyProblem(callId) === undefined ? callId : `sha256-${sha256(callId).slice(0, 32)}`

/**
 * The handler `@effect/ai` calls: the call is a step of the saga in context, keyed by the model's
 * tool-call id when there is one. A failure the tool's failure schema does not describe (an
 * `Outcome.Failed`, an input over `maxPayloadBytes`) is a defect: the saga fails and compensates.
 * A pending approval of a model's or MCP client's call, or its refusal in a saga bound to
 * compensate, is put in its cell, and ends the handler (`@effect/ai` has no result for it): the
 * caller answers in its stead. The call is traced as its caller was (`Toolkit.handle` runs
 * untraced: see `handleUntraced`).
 */
export const wrap =
  (tool: Tool.Any, spec: StepSpec) =>
  (params: unknown): Effect.Effect<unknown, unknown> => {
    const declared = Schema.is(tool.failureSchema as Schema.Schema<unknown>)
    return Effect.gen(function* () {
      const saga = yield* Effect.serviceOption(CurrentSaga)
      if (Option.isNone(saga)) {
        return yield* Effect.dieMessage(
          `effect-saga: tool ${tool.name} was called outside a saga: run the agent inside Saga.run (or Saga.start)`
        )
      }
      const call = yield* FiberRef.get(currentToolCall)
      if (call === undefined) return yield* saga.value.step(spec, params, undefined)
      call.journaled = true
      // A call that awaits approval, or that the saga refused to run, is answered, not failed: its
      // span ends OK, and it fails after. A failure ends the span as the step's did: a failure
      // quoting a receipt is masked there.
      const span = spanAroundStep(`execute_tool ${tool.name}`, executeToolSpan(tool.name, call.id))
      const { spanEnded } = span
      const answered = yield* Effect.catchIf(
        saga.value.step(spec, params, stepKeyOf(call.id), { deferApproval: true, spanEnded }),
        (error) => error instanceof ApprovalPending || error instanceof ApprovalRefused,
        (error) =>
          Effect.sync(() => {
            if (error instanceof ApprovalPending) call.pending = error
            else call.refused = error as ApprovalRefused
            return answeredByCaller
          })
      ).pipe(span.around, asCaller(call))
      return answered === answeredByCaller ? yield* Effect.fail(call.pending ?? call.refused) : answered
    }).pipe(
      Effect.catchAll((error) =>
        declared(error) && !(error instanceof ApprovalPending) && !(error instanceof ApprovalRefused)
          ? Effect.fail(error)
          : Effect.die(error)
      )
    )
  }

/**
 * Checks an agent's declarations and handlers: every undo, override and handler names a tool of
 * the toolkit, every tool has its handler, and every step's declaration can work. Fails with the
 * first `DeclarationError`; returns the warnings worth logging.
 */
export const validate = (
  declarations: Declarations,
  policies: Record<string, Policy>,
  handlers: Readonly<Record<string, unknown>>,
  specs: ReadonlyArray<StepSpec>
): Effect.Effect<ReadonlyArray<string>, Compensable.DeclarationError> =>
  Effect.suspend(() => {
    const known = Object.keys(declarations.tools)
    const fail = (toolName: string, reason: string) =>
      Effect.fail(new Compensable.DeclarationError({ toolName, reason }))
    const unknown = (what: string) => `${what} names a tool this toolkit does not have (it has: ${known.join(", ")})`
    for (const name of Object.keys(declarations.undo)) {
      if (!(name in declarations.tools)) return fail(name, unknown("an undo"))
    }
    for (const name of Object.keys(declarations.policy)) {
      if (!(name in declarations.tools)) return fail(name, unknown("a policy override"))
    }
    for (const name of Object.keys(handlers)) {
      if (!(name in declarations.tools)) return fail(name, unknown("a handler"))
    }
    for (const [name, tool] of Object.entries(declarations.tools)) {
      const needsHandler = !Tool.isProviderDefined(tool) || tool.requiresHandler
      if (needsHandler && handlers[name] === undefined) return fail(name, "the tool has no handler")
    }
    for (const spec of specs) {
      const problem = checkTool({ spec }).problem
      if (problem !== undefined) return fail(spec.name, problem)
      const policy = policies[spec.name]!
      if (policy.readonly && policy.undo) {
        return fail(
          spec.name,
          "it is read-only (Tool.Readonly, or its policy's readonly), so it changes nothing and has nothing to undo: drop its undo, or, if it changes something, drop read-only"
        )
      }
    }
    const warnings: Array<string> = []
    for (const spec of specs) {
      const policy = policies[spec.name]!
      const warning = policy.undo ? checkTool({ spec }).warning : undefined
      if (warning !== undefined) warnings.push(warning)
      if (policy.gap) {
        warnings.push(
          `tool ${spec.name} is not read-only, not destructive, and has no undo: compensation skips it (SKIPPED). ` +
            'Declare an undo, or, if it only reads, mark it read-only (Tool.Readonly in code, kind: "read" in a manifest)'
        )
      }
    }
    return Effect.succeed(warnings)
  })
