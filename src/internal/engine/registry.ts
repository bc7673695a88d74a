import type * as Context from "effect/Context"
import type { StepSpec } from "./spec.js"

/** A tool this process can undo, with the context its undo runs in. */
export interface RegisteredTool {
  readonly spec: StepSpec
  readonly context: Context.Context<never>
}

/** Tools by name: registered by toolkits and by every call made through a saga. */
export type Registry = Map<string, RegisteredTool>
