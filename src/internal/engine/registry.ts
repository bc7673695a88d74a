import type * as Context from "effect/Context"
import type * as FiberRefs from "effect/FiberRefs"
import type { StepSpec } from "./spec.js"

/** A tool this process can undo, with the context its undo runs in. */
export interface RegisteredTool {
  readonly spec: StepSpec
  readonly context: Context.Context<never>
  /**
   * The FiberRef values its undo runs with besides its caller's (log annotations, `Effect.locally`
   * values): a run's call's, for the run's own undos; none for a tool registered otherwise.
   */
  readonly fiberRefs?: FiberRefs.FiberRefs | undefined
}

/** The step an undo is looked up for: by its id where a run kept its call, else by its tool's name. */
export interface UndoneStep {
  readonly stepId: string
  readonly toolName: string
}

/** Tools by name: registered by toolkits and by every call made through a saga. */
export type Registry = Map<string, RegisteredTool>
