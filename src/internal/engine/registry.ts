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

/**
 * Tools by name: registered by toolkits, manifests and agents (`Saga.register`), and remembered
 * from every call made through a saga. A name two different tools were registered under is known to
 * be shared: a step journaled under it cannot be told to be either's, so neither undoes it here.
 */
export class Registry {
  private readonly tools = new Map<string, RegisteredTool>()
  /** The names `Saga.register` registered a tool under: a call of another tool under one is not taken for it. */
  private readonly registered = new Set<string>()
  private readonly shared = new Set<string>()

  /** The tool registered under `name`: none if there is none, or if two different ones share it. */
  get(name: string): RegisteredTool | undefined {
    return this.shared.has(name) ? undefined : this.tools.get(name)
  }

  /**
   * Registers `tool` under `name` (`Saga.register`): the same tool again takes the newer context; a
   * different one marks the name shared (two manifests, toolkits or agents that bind one name).
   */
  register(name: string, tool: RegisteredTool): "shared" | "registered" {
    const known = this.tools.get(name)
    this.tools.set(name, tool)
    this.registered.add(name)
    if (known === undefined || sameUndo(known, tool)) return "registered"
    this.shared.add(name)
    return "shared"
  }

  /**
   * Remembers the tool of a call a run made, unless one is known by its name: a program may make
   * its tools anew in each run (`Compensable.make` inside it), and the first stands for them all.
   * A call of another tool than the one registered under its name marks the name shared: `"shared"`
   * the first time.
   */
  remember(name: string, tool: RegisteredTool): "shared" | "remembered" {
    const known = this.tools.get(name)
    if (known === undefined) this.tools.set(name, tool)
    else if (this.registered.has(name) && !this.shared.has(name) && !sameUndo(known, tool)) {
      this.shared.add(name)
      return "shared"
    }
    return "remembered"
  }

  /** Whether two different tools are known by `name`: `get(name)` finds neither. */
  isShared(name: string): boolean {
    return this.shared.has(name)
  }

  /** Why `get(name)` finds no tool: what an undo that cannot run here reports. */
  absence(name: string): string {
    return this.shared.has(name)
      ? `two different tools named ${name} are known in this process (two manifests, toolkits or agents bind that name, or a program called another tool than the one registered): a step journaled under that name cannot be told to be either's, so neither undoes it here`
      : `tool ${name} is not registered in this process`
  }
}

/**
 * Whether two tools under one name undo a step alike: the same tool; one declaration built again
 * (an agent's handlers' layer, provided to each run); two that share their undo (a manifest's tool
 * and the agent's handler made of it); two reads, which are never undone.
 */
const sameUndo = (known: RegisteredTool, tool: RegisteredTool): boolean =>
  known.spec === tool.spec ||
  (known.spec.declaredBy !== undefined && known.spec.declaredBy === tool.spec.declaredBy) ||
  (known.spec.compensate !== undefined && known.spec.compensate === tool.spec.compensate) ||
  (known.spec.changesNothing === true && tool.spec.changesNothing === true)
