/**
 * The agents a `--register` module exports (what `Agent.make` returns): their undos, registered with
 * the `Saga` service by the agent's own `toLayer`, as in the service that runs the agent. A CLI
 * process makes no tool call, so the agent is given handlers that only say so.
 *
 * NOTE: the CLI never imports `effect-saga/ai` (`@effect/ai` is an optional peer), and a module's
 * agent may come from another copy of the library: an agent is recognized by its type id's global
 * key and used through its public members only.
 *
 * @since 0.4.0
 */
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Predicate from "effect/Predicate"
import type * as Scope from "effect/Scope"
import type * as Saga from "../../Saga.js"

/** `Agent.TypeId`, by the key it is registered under. */
const AgentTypeId = Symbol.for("effect-saga/Agent")

/** `@effect/ai`'s marks on a tool, and on a tool the provider runs. */
const AiToolTypeId = "~@effect/ai/Tool"
const ProviderDefinedTypeId = "~@effect/ai/Tool/ProviderDefined"

/**
 * What the CLI uses of an agent: its tools as given, and `toLayer`.
 *
 * @since 0.4.0
 * @category models
 */
export interface AgentToolkit {
  readonly source: { readonly tools: Readonly<Record<string, unknown>> }
  readonly toLayer: (handlers: Readonly<Record<string, () => Effect.Effect<never>>>) => Layer.Layer<unknown, unknown>
}

/**
 * Whether a module's export is an agent (`Agent.make`'s value, from any copy of the library).
 *
 * @since 0.4.0
 * @category guards
 */
export const isAgent = (u: unknown): u is AgentToolkit =>
  Predicate.hasProperty(u, AgentTypeId) &&
  Predicate.hasProperty(u, "toLayer") &&
  Predicate.isFunction(u.toLayer) &&
  Predicate.hasProperty(u, "source") &&
  Predicate.hasProperty(u.source, "tools") &&
  Predicate.isObject(u.source.tools)

/**
 * Whether a module's export is `@effect/ai`'s own (a toolkit such as an agent's `toolkit`, or a
 * tool): it holds no undo.
 *
 * @since 0.4.0
 * @category guards
 */
export const isAiToolkitOrTool = (u: unknown): boolean =>
  Predicate.hasProperty(u, AiToolTypeId) ||
  (Predicate.hasProperty(u, "tools") &&
    Predicate.isObject(u.tools) &&
    Object.values(u.tools).some((tool) => Predicate.hasProperty(tool, AiToolTypeId)))

/** A tool the provider runs (and that needs no handler) is part of the model's answer, not a step. */
const isStep = (tool: unknown): boolean =>
  !Predicate.hasProperty(tool, ProviderDefinedTypeId) ||
  (Predicate.hasProperty(tool, "requiresHandler") && tool.requiresHandler === true)

/**
 * The names of the agent's tools whose calls are steps of its sagas.
 *
 * @since 0.4.0
 * @category registering
 */
export const stepNames = (agent: AgentToolkit): ReadonlyArray<string> =>
  Object.entries(agent.source.tools).flatMap(([name, tool]) => (isStep(tool) ? [name] : []))

/**
 * Builds the agent's Layer (it validates the agent's declarations and registers its undos with the
 * `Saga` service in context), its undos to run with `context`, for the scope.
 *
 * @since 0.4.0
 * @category registering
 */
export const register = (
  agent: AgentToolkit,
  context: Context.Context<never>
): Effect.Effect<void, unknown, Saga.Saga | Scope.Scope> => {
  const noCall = () => Effect.dieMessage("effect-saga: the CLI runs an agent's undos, never its tools")
  const handlers = Object.fromEntries(stepNames(agent).map((name) => [name, noCall]))
  return Effect.flatMap(Effect.scope, (scope) =>
    Effect.asVoid(Effect.provide(Layer.buildWithScope(agent.toLayer(handlers), scope), context))
  )
}
