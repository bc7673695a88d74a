/**
 * AI agents on `@effect/ai`: a `Toolkit` whose every tool call is a saga step (journaled with the
 * model's tool-call id, compensable, gated when irreversible), a `LanguageModel` whose every turn is
 * a saga step (a resumed or recovered agent replays the model's answers from the journal instead of
 * asking again), and the toolkit served over MCP. Imported as `effect-saga/ai`. See docs/agents.md.
 *
 * NOTE (file length): one public module for one entry point (`effect-saga/ai`), its exports and their
 * JSDoc; the implementation is `internal/ai/`.
 *
 * @since 0.1.0
 */
import type * as AiError from "@effect/ai/AiError"
import * as LanguageModel from "@effect/ai/LanguageModel"
import type * as McpSchema from "@effect/ai/McpSchema"
import * as McpServer from "@effect/ai/McpServer"
import * as Prompt from "@effect/ai/Prompt"
import * as Tool from "@effect/ai/Tool"
import * as AiToolkit from "@effect/ai/Toolkit"
import * as CommandExecutor from "@effect/platform/CommandExecutor"
import * as Cause from "effect/Cause"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import type * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type * as Compensable from "./Compensable.js"
import * as approvals from "./internal/ai/approvals.js"
import * as handlers from "./internal/ai/handlers.js"
import * as manifestAgent from "./internal/ai/manifest.js"
import * as mcp from "./internal/ai/mcp.js"
import * as model from "./internal/ai/model.js"
import * as toolCall from "./internal/ai/toolCall.js"
import { withoutSpan } from "./internal/observability/spans.js"
import { given } from "./internal/util/printable.js"
import type * as Manifest from "./Manifest.js"
import type * as Outcome from "./Outcome.js"
import { CurrentSaga, Saga } from "./Saga.js"

/**
 * The type id every `AgentToolkit` carries: `isAgentToolkit` checks it.
 *
 * @since 0.1.0
 * @category type ids
 */
export const TypeId: unique symbol = Symbol.for("effect-saga/Agent")

/**
 * The type of `TypeId`.
 *
 * @since 0.1.0
 * @category type ids
 */
export type TypeId = typeof TypeId

/**
 * How the saga runs one tool, and why (`reason`): its `reversibility`, its `retryMode`, whether it
 * only reads (`readonly`: no undo needed, never a gap), whether it has an undo, and whether it is a
 * `gap` (not read-only, not irreversible, no undo: compensation skips it).
 *
 * @since 0.1.0
 * @category models
 */
export interface Policy {
  readonly toolName: string
  readonly reversibility: Compensable.Reversibility
  readonly retryMode: Compensable.RetryMode
  /** The tool only reads: it needs no undo, and compensation never reports it as a gap. */
  readonly readonly: boolean
  /** An undo was declared for it. */
  readonly undo: boolean
  /** Not read-only, not irreversible, and no undo: compensation skips it (`SKIPPED`), a gap worth auditing. */
  readonly gap: boolean
  readonly failureMode: Tool.FailureMode
  /** Why the reversibility is what it is, in words. */
  readonly reason: string
}

/**
 * What a tool's policy may be told, overriding what its annotations say: `reversibility`,
 * `readonly`, `retryMode`, and the options every `Compensable` tool may carry. `In` is what the
 * `retry` schedule is fed (`Policies` makes it the tool's failure or an `Outcome`).
 *
 * @since 0.1.0
 * @category models
 */
export interface PolicyOverride<In = unknown> {
  readonly reversibility?: Compensable.Reversibility | undefined
  readonly readonly?: boolean | undefined
  readonly retryMode?: Compensable.RetryMode | undefined
  readonly timeout?: Duration.DurationInput | undefined
  /**
   * Retries a failed call before anything is journaled about its outcome, as `Compensable`'s
   * `retry`: fed the error of each failed attempt (what the handler failed with: the tool's failure
   * or an `Outcome`; an `Outcome.Unknown` for an attempt that timed out).
   */
  readonly retry?: Schedule.Schedule<unknown, In, never> | undefined
  readonly maxPayloadBytes?: number | undefined
  readonly approvalTtl?: Duration.DurationInput | undefined
  readonly receiptRequired?: boolean | undefined
  readonly approveExplicitUndo?: boolean | undefined
  /** Journaled with the call's `INTENT`: what the call is allowed besides its input (since 0.3.0). */
  readonly capabilities?: ReadonlyArray<string> | undefined
}

/**
 * The handlers of a toolkit's tools: a tool's parameters and its step's context (idempotency key,
 * `setReceipt`) in, its success out; it fails with the tool's failure (or an `Outcome`).
 *
 * @since 0.1.0
 * @category models
 */
export type Handlers<Tools extends Record<string, Tool.Any>, R = never> = {
  readonly [Name in keyof Tools as Tool.RequiresHandler<Tools[Name]> extends true ? Name : never]: (
    params: Tool.Parameters<Tools[Name]>,
    step: Compensable.StepContext
  ) => Effect.Effect<Tool.Success<Tools[Name]>, Tool.Failure<Tools[Name]> | Outcome.Outcome, R>
}

/**
 * Handlers `H` with no key that names no tool of `Tools`: a handler for a tool the toolkit does
 * not have does not type-check (building the Layer would refuse it with a `DeclarationError`).
 *
 * @since 0.5.0
 * @category models
 */
export type ExactHandlers<Tools extends Record<string, Tool.Any>, H> = H & {
  readonly [Name in Exclude<keyof H, keyof Tools>]: never
}

/**
 * The undo of each tool that has one, by tool name: it sees the call's parameters and result. It is
 * one call: `make` refuses, in the types, one that calls a compensable tool or starts a saga
 * (`BoundedUndos`).
 *
 * @since 0.1.0
 * @category models
 */
export type Undos<Tools extends Record<string, Tool.Any>, R = never> = {
  readonly [Name in keyof Tools]?: (
    ctx: Compensable.CompensationContext<Tool.Parameters<Tools[Name]>, Tool.Success<Tools[Name]>>
  ) => Effect.Effect<unknown, unknown, R>
}

/**
 * What the type checker tells an undo of `Undos` that needs `Saga.CurrentSaga` (it calls a
 * compensable tool) or the `Saga` service (it starts a saga), as `Compensable.BoundedUndo` tells a
 * tool's: the inverse of a step is one undo call.
 *
 * @since 0.5.0
 * @category models
 */
export type BoundedUndos<U> = {
  readonly [Name in keyof U]: [Extract<Requirements<Pick<U, Name>>, CurrentSaga | Saga>] extends [never]
    ? unknown
    : "DeclarationError: an undo cannot call a compensable tool or start a saga"
}

/**
 * Policy overrides, by tool name; a tool's `retry` is fed its failure or an `Outcome`.
 *
 * @since 0.1.0
 * @category models
 */
export type Policies<Tools extends Record<string, Tool.Any>> = {
  readonly [Name in keyof Tools]?: PolicyOverride<Tool.Failure<Tools[Name]> | Outcome.Outcome>
}

/**
 * The services the functions of a record need.
 *
 * @since 0.1.0
 * @category models
 */
export type Requirements<Fns> = {
  [K in keyof Fns]-?: NonNullable<Fns[K]> extends (...args: any) => Effect.Effect<any, any, infer R> ? R : never
}[keyof Fns]

/**
 * The tools as the saga runs them: the same tools, needing `Saga.CurrentSaga` (so a model call with
 * them does not type-check outside a saga), annotated as their policy says.
 *
 * @since 0.1.0
 * @category models
 */
export type WithSaga<Tools extends Record<string, Tool.Any>> = {
  readonly [Name in keyof Tools]: Tools[Name] extends Tool.AnyProviderDefined
    ? Tools[Name]
    : Tools[Name] extends Tool.Tool<infer N, infer Config, infer R>
      ? Tool.Tool<N, Config, R | CurrentSaga>
      : Tools[Name]
}

/**
 * What `make` takes besides the toolkit: an undo per tool name, policy overrides per tool name, and
 * what a failure the model is fed does to the saga: `"compensate"` (default: the saga records it and
 * compensates when the agent's run ends) or `"continue"` (recorded, not compensated for).
 *
 * @since 0.1.0
 * @category models
 */
export interface MakeOptions<Tools extends Record<string, Tool.Any>, U extends Undos<Tools, any>> {
  // `U` is inferred from the undos alone (`NoInfer` on the checks): checks that took part made a map
  // mixing undos that take `ctx` with ones that do not fall back to `Undos<Tools, any>`.
  readonly undo?:
    | (U & NoInfer<{ readonly [Name in Exclude<keyof U, keyof Tools>]: never } & BoundedUndos<U>>)
    | undefined
  readonly policy?: Policies<Tools> | undefined
  readonly onToolFailure?: "compensate" | "continue" | undefined
}

/**
 * A toolkit whose calls are saga steps. `toolkit` is what to give the model (and `McpServer`);
 * `toLayer(handlers)` builds its handlers, checking every declaration when the Layer is built.
 *
 * @since 0.1.0
 * @category models
 */
export interface AgentToolkit<in out Tools extends Record<string, Tool.Any>, RC = never> {
  readonly [TypeId]: TypeId
  /** The toolkit as given. */
  readonly source: AiToolkit.Toolkit<Tools>
  /** The tools as the saga runs them: pass this to `LanguageModel.generateText` and to `layerMcp`. */
  readonly toolkit: AiToolkit.Toolkit<WithSaga<Tools>>
  /** Each tool's saga policy. */
  readonly policies: { readonly [Name in keyof Tools]: Policy }
  readonly onToolFailure: "compensate" | "continue"
  /**
   * The handlers, each call a saga step keyed by the model's tool-call id. Building the Layer
   * validates every declaration (an undo or override naming no tool of the toolkit, an undo on an
   * irreversible tool, a missing handler, schemas that cannot be journaled: `DeclarationError`),
   * logs the warnings (gaps, undos with nothing to target) and registers the undos with `Saga`.
   * It provides the handlers of `toolkit`: the same services as `source`'s, since a tool keeps its name.
   */
  toLayer<H extends Handlers<Tools, any>, EX = never, RX = never>(
    build: ExactHandlers<Tools, H> | Effect.Effect<ExactHandlers<Tools, H>, EX, RX>
  ): Layer.Layer<
    Tool.HandlersFor<WithSaga<Tools>>,
    Compensable.DeclarationError | EX,
    Saga | Exclude<Requirements<H> | RC | RX, Scope.Scope>
  >
}

/**
 * Makes a toolkit's calls saga steps, with the saga policy of each tool read from its
 * annotations and overridable per tool:
 *
 * - `Tool.Readonly` → `reversible`, no undo needed, never reported as a gap; retried after a crash;
 * - a declared undo → `compensatable`;
 * - `Tool.Destructive` (`@effect/ai`'s default) and no undo → `irreversible`: waits for an approval;
 * - `Tool.Destructive` false and no undo → `compensatable` without an undo: a gap (`SKIPPED`);
 * - `Tool.Idempotent` → `retryMode: "idempotency-key"`.
 *
 * Nothing is checked yet: `toLayer` does that when its Layer is built.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <Tools extends Record<string, Tool.Any>, U extends Undos<Tools, any> = Undos<Tools>>(
  toolkit: AiToolkit.Toolkit<Tools>,
  options?: MakeOptions<Tools, U>
): AgentToolkit<Tools, Requirements<U>> => {
  const declarations: handlers.Declarations = {
    tools: toolkit.tools,
    undo: (options?.undo ?? {}) as handlers.Declarations["undo"],
    policy: (options?.policy ?? {}) as handlers.Declarations["policy"],
    onToolFailure: options?.onToolFailure ?? "compensate"
  }
  const policies = handlers.policiesOf(declarations)
  const sagaTools = Object.values(toolkit.tools).map((tool) => {
    if (Tool.isProviderDefined(tool)) return tool
    const policy = policies[tool.name]!
    return (tool as Tool.Tool<string, any>)
      .addDependency(CurrentSaga)
      .annotate(Tool.Readonly, policy.readonly)
      .annotate(Tool.Destructive, policy.reversibility === "irreversible")
      .annotate(Tool.Idempotent, policy.retryMode === "idempotency-key")
  })
  const sagaToolkit = AiToolkit.make(...sagaTools) as unknown as AiToolkit.Toolkit<WithSaga<Tools>>
  return {
    [TypeId]: TypeId,
    source: toolkit,
    toolkit: sagaToolkit,
    policies: policies as AgentToolkit<Tools>["policies"],
    onToolFailure: declarations.onToolFailure,
    toLayer: <H extends Handlers<Tools, any>, EX = never, RX = never>(
      build: ExactHandlers<Tools, H> | Effect.Effect<ExactHandlers<Tools, H>, EX, RX>
    ) =>
      Layer.scopedContext(
        Effect.gen(function* () {
          const built: Readonly<Record<string, handlers.AnyHandler | undefined>> = Effect.isEffect(build)
            ? yield* build
            : build
          // The handlers' services, as given; not the span the layer was built in: a handler's own
          // spans are children of its call's step span.
          const context = withoutSpan(yield* Effect.context<never>())
          const specs = []
          const wrapped: Record<string, (params: unknown) => Effect.Effect<unknown, unknown>> = {}
          for (const [name, tool] of Object.entries(declarations.tools)) {
            const handler = built[name]
            if (handler === undefined) continue
            const spec = handlers.specOf(declarations, tool, policies[name]!, handler, context)
            specs.push(spec)
            wrapped[name] = handlers.wrap(tool, spec)
          }
          const warnings = yield* handlers.validate(declarations, policies, built, specs)
          for (const warning of warnings) yield* Effect.logWarning(`effect-saga: ${warning}`)
          const saga = yield* Saga
          yield* saga.register(specs.map((spec) => ({ name: spec.name, reversibility: spec.reversibility, spec })))
          // `wrapped` holds a handler for every tool that needs one (`validate` failed the layer
          // otherwise), each a saga step that answers with its handler's success or declared failure
          // (anything else is a defect, see `handlers.wrap`): what `HandlersFrom` asks of it.
          return yield* sagaToolkit.toContext(wrapped as AiToolkit.HandlersFrom<WithSaga<Tools>>)
        })
      )
  }
}

/**
 * A manifest's toolkit (see `Manifest` and docs/manifest.md) as an agent's: one tool per binding
 * that is no other's inverse (an inverse runs only as the undo of the call it compensates: the model
 * is not offered it, and it is no gap), its parameters the fields of the binding's object input, its policy the binding's effect contract
 * (`read` → read-only, `irreversible` → destructive, `idempotency_key` → idempotent), each call the
 * binding's process, its undo the compensating binding's. `layer` provides the handlers; it needs a
 * `CommandExecutor` (`NodeContext.layer`). A binding whose input is not an object is a `ManifestError`.
 * Building `layer` checks what `Manifest.layer` checks (every command an executable file, every `cwd`
 * a folder, every secret set, every schema journalable), failing with a `ManifestError` naming the
 * JSON path, before it registers anything.
 *
 * @since 0.2.0
 * @category constructors
 */
export const fromManifest = (
  manifestToolkit: Manifest.ManifestToolkit
): Effect.Effect<
  {
    readonly agent: AgentToolkit<Record<string, Tool.Any>>
    readonly layer: Layer.Layer<
      Tool.HandlersFor<WithSaga<Record<string, Tool.Any>>>,
      Compensable.DeclarationError | Manifest.ManifestError,
      Saga | CommandExecutor.CommandExecutor
    >
  },
  Manifest.ManifestError
> =>
  Effect.map(manifestAgent.declare(manifestToolkit), (declared) => {
    const agent = make(declared.toolkit, { undo: declared.undo, policy: declared.policy })
    // The tools are known at run time only: their handlers take and answer what their schemas say.
    const layer = agent.toLayer(
      declared.handlers as unknown as ExactHandlers<Record<string, Tool.Any>, Handlers<Record<string, Tool.Any>>>
    )
    // The undos run in the context the layer is built in: it must hold the command executor.
    const handlers = Layer.merge(layer, Layer.effectDiscard(CommandExecutor.CommandExecutor))
    return { agent, layer: manifestAgent.checkedFirst(manifestToolkit, handlers) }
  })

/**
 * Whether a value is an `AgentToolkit`.
 *
 * @since 0.1.0
 * @category guards
 */
export const isAgentToolkit = (u: unknown): u is AgentToolkit<any, unknown> =>
  typeof u === "object" && u !== null && TypeId in u

/**
 * How model turns are journaled: the step `name` (default `"LanguageModel"`), a `retry` schedule and
 * a `timeout` for the model call, and `maxPayloadBytes` for what a turn journals (the messages
 * its prompt added, and its answer). Whatever a turn fails with is an `AiError`, as `@effect/ai`
 * types a model call's failure.
 *
 * @since 0.1.0
 * @category models
 */
export interface ModelOptions {
  /** The step name of a model turn (default `"LanguageModel"`). */
  readonly name?: string | undefined
  /**
   * Retries a failed model call (a timed-out one too) before anything is journaled about its
   * outcome. The schedule is fed the error of each failed call: the `AiError` it failed with, an
   * `Outcome.Unknown` for one that timed out (an `Outcome.Failed` or `Outcome.Unknown` a
   * `Testing.faults` plan injects, too).
   */
  readonly retry?: Schedule.Schedule<unknown, AiError.AiError | Outcome.Failed | Outcome.Unknown, never> | undefined
  /**
   * How long one model call may take. A call that takes longer is abandoned: unless `retry` asks
   * again, the turn fails with `AiError.UnknownError` (`the model call did not answer: outcome
   * unknown: …`), journaled `FAILED` like any failed turn and the program's to handle; a replay
   * answers the same failure, it does not ask the model again.
   */
  readonly timeout?: Duration.DurationInput | undefined
  /**
   * Cap on what a turn journals, in bytes: the messages its prompt added, and the answer (default 1
   * MiB). A prompt over it fails the turn with `AiError.MalformedInput` before the model is asked;
   * an answer over it, with `AiError.MalformedOutput`.
   */
  readonly maxPayloadBytes?: number | undefined
}

/**
 * Wraps a `LanguageModel` service so that each call made inside a saga is a step of its own: its
 * input the prompt (encoded), the tools offered and the tool choice; its result the model's answer
 * (encoded with `@effect/ai`'s response schemas). A replay returns the journaled answer without
 * asking the model; another prompt at the same turn, or a journaled answer the toolkit no longer
 * decodes (a tool's parameters changed), fails the run with `NonDeterminism`, nothing written. The
 * answer's tool calls are then resolved by the toolkit's handlers, each keyed by its call id (without
 * `Toolkit.handle`'s span, whose attributes are the call's parameters). A turn fails with an
 * `AiError` only (see `ModelOptions`). Outside a saga, calls go to the model unchanged.
 *
 * NOTE: `streamText` inside a saga emits the turn's parts once the whole turn is journaled, not as
 * the model produces them: a turn cannot be replayed before it is journaled.
 *
 * @since 0.1.0
 * @category constructors
 */
export const journaledModel: (service: LanguageModel.Service, options?: ModelOptions) => LanguageModel.Service =
  model.journaled

/**
 * The `LanguageModel` in context, journaled (see `journaledModel`) with the given options. Where a
 * `Saga` service is in context too, the turn step is registered with it, so that `Saga.compensate`
 * and `Saga.reject` in this process pass the model's turns (their undo is empty). Options that
 * cannot work (a `timeout` that is not a positive duration, a `maxPayloadBytes` that is not a
 * positive integer, a `name` that cannot be journaled) fail the build with
 * `Compensable.DeclarationError` (since 0.4.0).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerModelWith = (
  options: ModelOptions
): Layer.Layer<LanguageModel.LanguageModel, Compensable.DeclarationError, LanguageModel.LanguageModel> =>
  Layer.effect(
    LanguageModel.LanguageModel,
    Effect.gen(function* () {
      const turn = yield* model.checkedTurn(options)
      const saga = yield* Effect.serviceOption(Saga)
      if (Option.isSome(saga)) yield* saga.value.register([turn])
      return model.journaled(yield* LanguageModel.LanguageModel, options)
    })
  )

/**
 * The `LanguageModel` in context, journaled: `Agent.layerModel.pipe(Layer.provide(YourModel))`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerModel: Layer.Layer<LanguageModel.LanguageModel, never, LanguageModel.LanguageModel> = Layer.orDie(
  // The default options always work.
  layerModelWith({})
)

/**
 * What the model (or an MCP client) is told of a tool call that awaits approval, as the call's
 * result (not a failure): it has not run; it runs once approved; do not call it again.
 *
 * @since 0.1.0
 * @category models
 */
export interface AwaitingApproval {
  readonly status: "awaiting-approval"
  readonly message: string
}

/**
 * Whether a tool result is `AwaitingApproval` (say, to show a pending call in a chat).
 *
 * @since 0.1.0
 * @category guards
 */
export const isAwaitingApproval: (u: unknown) => u is AwaitingApproval = toolCall.isAwaitingApproval

/**
 * What the model (or an MCP client) is told of an irreversible call the saga refused to run, as a
 * failed result: a failure had bound the saga to compensate when the agent's run ends, so the call
 * would be the one effect nobody could undo. It is never run and no approval is asked for it;
 * `message` says why, naming the step that failed. Every replay answers the same.
 *
 * @since 0.4.0
 * @category models
 */
export interface NotRun {
  readonly status: "not-run"
  readonly message: string
}

/**
 * Whether a tool result is `NotRun`.
 *
 * @since 0.4.0
 * @category guards
 */
export const isNotRun: (u: unknown) => u is NotRun = toolCall.isNotRun

/**
 * The type id an agent's errors carry: `isAgentError` checks it (`isMaxTurnsExceeded` and
 * `isInvalidLoopOptions` then their `_tag`), never a `_tag` that a plain value could share.
 *
 * @since 0.2.0
 * @category type ids
 */
export const ErrorTypeId: unique symbol = Symbol.for("effect-saga/Agent/Error")

/**
 * @since 0.2.0
 * @category type ids
 */
export type ErrorTypeId = typeof ErrorTypeId

/**
 * An agent ran out of turns: the model was still calling tools after `maxTurns` answers. The
 * program fails with it, so the saga compensates.
 *
 * @since 0.1.0
 * @category errors
 */
export class MaxTurnsExceeded extends Schema.TaggedError<MaxTurnsExceeded>("effect-saga/MaxTurnsExceeded")(
  "MaxTurnsExceeded",
  { maxTurns: Schema.Int }
) {
  /** @since 0.2.0 */
  get [ErrorTypeId](): ErrorTypeId {
    return ErrorTypeId
  }
  override get message(): string {
    return `the model was still calling tools after ${this.maxTurns} turns`
  }
}

/**
 * Whether a value is one of an agent's errors (`MaxTurnsExceeded`, `InvalidLoopOptions`), by its
 * `ErrorTypeId`.
 *
 * @since 0.4.0
 * @category guards
 */
export const isAgentError = (u: unknown): u is MaxTurnsExceeded | InvalidLoopOptions =>
  Predicate.hasProperty(u, ErrorTypeId)

/**
 * Whether a value is a `MaxTurnsExceeded`, by its `ErrorTypeId` (and its `_tag` among an agent's errors).
 *
 * @since 0.2.0
 * @category guards
 */
export const isMaxTurnsExceeded = (u: unknown): u is MaxTurnsExceeded =>
  isAgentError(u) && u._tag === "MaxTurnsExceeded"

/**
 * `loop` was given an option it cannot work with: a `maxTurns` that is not a positive integer (`0`,
 * `-1`, `1.5`, `NaN`, `Infinity`, text). The loop fails with it before the model is asked.
 *
 * @since 0.4.0
 * @category errors
 */
export class InvalidLoopOptions extends Schema.TaggedError<InvalidLoopOptions>("effect-saga/InvalidLoopOptions")(
  "InvalidLoopOptions",
  { option: Schema.Literal("maxTurns"), reason: Schema.String }
) {
  /** @since 0.4.0 */
  get [ErrorTypeId](): ErrorTypeId {
    return ErrorTypeId
  }
  override get message(): string {
    return `Agent.loop: ${this.option} ${this.reason}`
  }
}

/**
 * Whether a value is an `InvalidLoopOptions`, by its `ErrorTypeId` (and its `_tag` among an agent's errors).
 *
 * @since 0.4.0
 * @category guards
 */
export const isInvalidLoopOptions = (u: unknown): u is InvalidLoopOptions =>
  isAgentError(u) && u._tag === "InvalidLoopOptions"

/**
 * What `loop` takes: the conversation so far, the toolkit (with its handlers), the tool choice and
 * how many model turns it may take (`maxTurns`: a positive integer, default 10; anything else is
 * `InvalidLoopOptions`).
 *
 * @since 0.1.0
 * @category models
 */
export interface LoopOptions<Tools extends Record<string, Tool.Any>, E, R> {
  readonly prompt: Prompt.RawInput
  readonly toolkit?: AiToolkit.WithHandler<Tools> | Effect.Effect<AiToolkit.WithHandler<Tools>, E, R> | undefined
  readonly toolChoice?: LanguageModel.ToolChoice<Tools[keyof Tools]["name"]> | undefined
  readonly maxTurns?: number | undefined
}

/**
 * How a conversation ended: the model's last answer (and its text), the whole conversation as a
 * prompt, and how many turns it took.
 *
 * @since 0.1.0
 * @category models
 */
export interface LoopResult<Tools extends Record<string, Tool.Any>> {
  readonly text: string
  readonly response: LanguageModel.GenerateTextResponse<Tools>
  readonly prompt: Prompt.Prompt
  readonly turns: number
}

/**
 * The agent loop: asks the model, runs the tools it calls, feeds their results back, and asks
 * again until it answers without calling a tool. With `layerModel` and an agent's toolkit, every
 * turn and every tool call is a saga step.
 *
 * An irreversible call is answered `AwaitingApproval` and the conversation goes on. Before the
 * model's final answer the loop settles such calls: while one is not approved the saga halts and
 * returns `AwaitingApproval`; after `Saga.approve`, `Saga.resume` replays the journaled turns
 * (asking the model nothing), runs the call once, tells the model how it went in a user message,
 * and asks it again. In a saga a failure has bound to compensate, an irreversible call neither runs
 * nor waits: the model is told it was not run, and why (`NotRun`).
 *
 * A `maxTurns` that is not a positive integer fails the loop with `InvalidLoopOptions` before the
 * model is asked.
 *
 * @since 0.1.0
 * @category combinators
 */
export const loop = <Tools extends Record<string, Tool.Any> = {}, E = never, R = never>(
  options: LoopOptions<Tools, E, R>
): Effect.Effect<
  LoopResult<Tools>,
  AiError.AiError | MaxTurnsExceeded | InvalidLoopOptions | Tool.HandlerError<Tools[keyof Tools]> | E,
  LanguageModel.LanguageModel | Tool.Requirements<Tools[keyof Tools]> | R
> =>
  Effect.gen(function* () {
    const maxTurns = options.maxTurns ?? 10
    if (!Number.isSafeInteger(maxTurns) || maxTurns < 1) {
      return yield* new InvalidLoopOptions({
        option: "maxTurns",
        reason: `is ${given(maxTurns)}, not a positive integer: how many times the model may be asked`
      })
    }
    const toolkit = Effect.isEffect(options.toolkit) ? yield* options.toolkit : options.toolkit
    let prompt = Prompt.make(options.prompt)
    const awaiting: Array<toolCall.PendingCall> = []
    for (let turn = 1; turn <= maxTurns; turn++) {
      const ask = LanguageModel.generateText({
        prompt,
        ...(toolkit === undefined ? {} : { toolkit }),
        ...(options.toolChoice === undefined ? {} : { toolChoice: options.toolChoice })
      } as LanguageModel.GenerateTextOptions<any>) as Effect.Effect<any, any, any>
      const response: LanguageModel.GenerateTextResponse<Tools> = yield* Effect.locally(
        ask,
        toolCall.pendingCalls,
        awaiting
      )
      prompt = Prompt.merge(prompt, Prompt.fromResponseParts(response.content))
      if (response.toolCalls.length > 0) continue
      if (awaiting.length === 0) return { text: response.text, response, prompt, turns: turn }
      // Before its final answer, the model is told how the calls that awaited approval went.
      const told = yield* approvals.settle(awaiting.splice(0), toolkit!.tools as Record<string, Tool.Any>)
      prompt = Prompt.merge(prompt, told)
    }
    return yield* new MaxTurnsExceeded({ maxTurns })
  })

/**
 * Registers an agent's toolkit with the `McpServer` in context. Each call runs its handler as a
 * step of the saga the registration runs in; the hints (read-only, destructive, idempotent) are the
 * saga policy's, and a failure the model would be fed (`failureMode: "return"`) is reported to the
 * MCP client with `isError: true`.
 *
 * @since 0.1.0
 * @category mcp
 */
export const registerMcp = <Tools extends Record<string, Tool.Any>, RC>(
  agent: AgentToolkit<Tools, RC>
): Effect.Effect<
  void,
  never,
  McpServer.McpServer | Tool.HandlersFor<WithSaga<Tools>> | CurrentSaga | Tool.Requirements<Tools[keyof Tools]>
> => mcp.register(agent.toolkit, agent.policies as Record<string, Policy>)

/**
 * Serves an agent's toolkit over MCP (see `registerMcp`), as `McpServer.toolkit` does for a plain
 * toolkit. Build it inside the saga the session's calls belong to (see `mcpSession`).
 *
 * @since 0.1.0
 * @category mcp
 */
export const layerMcp = <Tools extends Record<string, Tool.Any>, RC>(
  agent: AgentToolkit<Tools, RC>
): Layer.Layer<never, never, Tool.HandlersFor<WithSaga<Tools>> | CurrentSaga | Tool.Requirements<Tools[keyof Tools]>> =>
  Layer.effectDiscard(registerMcp(agent)).pipe(Layer.provide(McpServer.McpServer.layer))

/**
 * One MCP session as a saga program: serves the agent's toolkit over `transport` (say,
 * `McpServer.layerStdio(...)`) until the client goes away, every call a step of the saga it runs
 * in. `Saga.run(sessionId, Agent.mcpSession(agent, transport))` then completes, or compensates if
 * a call failed or died (its client was told `isError: true`; the saga fails with the first such
 * defect when the session ends). An irreversible call is answered that it awaits approval and the session goes on;
 * when it ends, the saga returns `AwaitingApproval`. After the approval, `Saga.resume` with the same
 * program runs the call and ends the saga: a resumed session does not serve again (its client is
 * gone), and the client is not told the result (the journal has it).
 *
 * NOTE: `@effect/rpc`'s stdio transport ends a session by interrupting the fiber that built it;
 * the server runs in a fiber of its own so that this ends the session, not the saga's program.
 *
 * @since 0.1.0
 * @category mcp
 */
export const mcpSession = <Tools extends Record<string, Tool.Any>, RC, E, R>(
  agent: AgentToolkit<Tools, RC>,
  transport: Layer.Layer<McpServer.McpServer | McpSchema.McpServerClient, E, R>
): Effect.Effect<
  void,
  E,
  R | Tool.HandlersFor<WithSaga<Tools>> | CurrentSaga | Tool.Requirements<Tools[keyof Tools]>
> =>
  Effect.flatMap(mcp.opensSession, (opens) => {
    if (!opens) return Effect.void
    // The first call that died (an input over its cap, a handler's defect): the session's saga fails
    // with it when the session ends, and compensates, as an agent's loop does at once.
    let died: Cause.Cause<never> | undefined
    const served = Layer.effectDiscard(
      mcp.register(agent.toolkit, agent.policies as Record<string, Policy>, (cause) => {
        // A cause with no failure in it (`register` reports only those): its defect.
        died ??= cause as Cause.Cause<never>
      })
    ).pipe(Layer.provide(McpServer.McpServer.layer), Layer.provide(transport))
    return Effect.flatMap(Effect.fork(Layer.launch(served)), (server) =>
      Effect.flatMap(Fiber.await(server), (exit) =>
        Exit.isFailure(exit) && !Cause.isInterruptedOnly(exit.cause)
          ? Effect.failCause(exit.cause)
          : died === undefined
            ? Effect.void
            : Effect.failCause(died)
      )
    )
  })
