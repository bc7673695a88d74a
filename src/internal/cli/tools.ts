/**
 * `--register MODULE`: the tools whose undos a CLI process may run. A CLI process declares no tools
 * of its own, so without them an undo is `unavailable`; the commands that would undo something
 * (`compensate`, `reject`) refuse to start until every tool they need is registered. A module
 * exports tools and toolkits, or agents (`Agent.make`), whose undos are registered as their own
 * Layer registers them.
 *
 * @since 0.1.0
 */
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Predicate from "effect/Predicate"
import type * as Scope from "effect/Scope"
import * as Compensable from "../../Compensable.js"
import type * as Manifest from "../../Manifest.js"
import * as Saga from "../../Saga.js"
import * as Toolkit from "../../Toolkit.js"
import { check as checkManifest } from "../manifest/check.js"
import { owingUndo } from "../util/undoNeeded.js"
import * as Agents from "./agents.js"
import { UsageError } from "./failure.js"

/** Whether a value is a declared tool (a `Compensable` made by any copy of the library). */
const isTool = (u: unknown): u is Compensable.Any =>
  (Predicate.isFunction(u) || Predicate.isObject(u)) &&
  Predicate.hasProperty(u, "spec") &&
  Predicate.isObject(u.spec) &&
  Predicate.hasProperty(u.spec, "execute") &&
  Predicate.isFunction(u.spec.execute) &&
  typeof (u as { readonly name?: unknown }).name === "string"

/** The tools in one export: a tool, a toolkit, or an array or record of them. */
const toolsIn = (value: unknown): ReadonlyArray<Compensable.Any> => {
  if (isTool(value)) return [value]
  if (Agents.isAgent(value)) return []
  if (Predicate.isObject(value) && Predicate.hasProperty(value, "byName") && value.byName instanceof Map) {
    return Array.from(value.byName.values()).filter(isTool)
  }
  if (Array.isArray(value)) return value.filter(isTool)
  if (Predicate.isObject(value) && !Predicate.isFunction(value) && !Layer.isLayer(value)) {
    return Object.values(value).filter(isTool)
  }
  return []
}

/** Whether an export is a manifest's toolkit (`Manifest.toolkit`): checked as `Manifest.layer` checks it. */
const isManifestToolkit = (u: unknown): u is Manifest.ManifestToolkit =>
  Predicate.isObject(u) &&
  Predicate.hasProperty(u, "manifest") &&
  Predicate.hasProperty(u, "problem") &&
  Predicate.hasProperty(u, "byName") &&
  u.byName instanceof Map

/**
 * The boot checks of the module's manifest toolkits (every command executable, every `cwd` a folder,
 * every secret set), so that a typo stops the command before it undoes anything, as it stops a
 * service whose `Manifest.layer` is built. (Their warnings are `Toolkit.validate`'s, which
 * `register` logs for every tool.)
 */
const checkManifests = (specifier: string, exports: Record<string, unknown>) =>
  Effect.forEach(
    Object.values(exports).filter(isManifestToolkit),
    (manifestToolkit) =>
      Effect.mapError(
        checkManifest(manifestToolkit),
        (error) => new UsageError({ message: `--register ${specifier}: its manifest ${error.message}` })
      ),
    { discard: true }
  )

/** The agents in one export: an agent (`Agent.make`), or an array or record of them. */
const agentsIn = (value: unknown): ReadonlyArray<Agents.AgentToolkit> => {
  if (Agents.isAgent(value)) return [value]
  if (Array.isArray(value)) return value.filter(Agents.isAgent)
  if (Predicate.isObject(value) && !Predicate.isFunction(value) && !Layer.isLayer(value)) {
    return Object.values(value).filter(Agents.isAgent)
  }
  return []
}

const describe = (error: unknown): string => (error instanceof Error ? error.message : String(error)).split("\n")[0]!

/**
 * Why a module that exports nothing `--register` can use is refused: an `@effect/ai` toolkit (an
 * agent's `toolkit`, say) holds no undo, the agent does.
 */
const exportsNothing = (specifier: string, exports: Record<string, unknown>): UsageError => {
  const aiExport = Object.keys(exports).find((name) => Agents.isAiToolkitOrTool(exports[name]))
  return new UsageError({
    message:
      aiExport === undefined
        ? `--register ${specifier}: it exports no tools (Compensable tools, toolkits, agents made with Agent.make, or arrays or records of them)`
        : `--register ${specifier}: its export ${aiExport} is @effect/ai's, which holds no undo: export the agent itself (the value Agent.make returns)`
  })
}

/** A module's tools and agents, and the context its `layer` export (if any) builds for their undos. */
const load = (specifier: string) =>
  Effect.gen(function* () {
    const url = pathToFileURL(path.resolve(specifier)).href
    const exports = yield* Effect.tryPromise({
      try: () => import(url) as Promise<Record<string, unknown>>,
      catch: (error) => new UsageError({ message: `--register ${specifier}: cannot import it: ${describe(error)}` })
    })
    const tools = new Set(Object.values(exports).flatMap(toolsIn))
    const agents = new Set(Object.values(exports).flatMap(agentsIn))
    if (tools.size === 0 && agents.size === 0) return yield* exportsNothing(specifier, exports)
    yield* checkManifests(specifier, exports)
    const context: Context.Context<never> = Layer.isLayer(exports.layer)
      ? yield* Effect.mapError(
          Layer.buildWithScope(exports.layer as Layer.Layer<unknown, unknown>, yield* Effect.scope),
          (error) => new UsageError({ message: `--register ${specifier}: its layer failed: ${describe(error)}` })
        )
      : Context.empty()
    return { specifier, tools: Array.from(tools), agents: Array.from(agents), context }
  })

/**
 * Imports each module, validates its tools as a toolkit (unique names, sound declarations) and
 * registers them with the `Saga` service, their undos to run with the services of the module's
 * `layer` export; an agent's Layer validates and registers its own. Returns the names of the tools
 * registered.
 *
 * @since 0.1.0
 * @category registering
 */
export const register = (
  modules: ReadonlyArray<string>
): Effect.Effect<ReadonlySet<string>, UsageError | Compensable.DeclarationError, Saga.Saga | Scope.Scope> =>
  Effect.gen(function* () {
    const saga = yield* Saga.Saga
    const loaded = yield* Effect.forEach(modules, load)
    const all = loaded.flatMap((module) => module.tools)
    const warnings = yield* Toolkit.validate(Toolkit.make(Object.fromEntries(all.map((tool, i) => [String(i), tool]))))
    for (const warning of warnings) yield* Effect.logWarning(warning)
    const names = [
      ...all.map((tool) => tool.name),
      ...loaded.flatMap((module) => module.agents.flatMap(Agents.stepNames))
    ]
    const twice = names.find((name, i) => names.indexOf(name) !== i)
    if (twice !== undefined) {
      return yield* new Compensable.DeclarationError({ toolName: twice, reason: "two tools share this name" })
    }
    for (const module of loaded) {
      yield* Effect.provide(saga.register(module.tools), module.context)
      for (const agent of module.agents) {
        yield* Effect.mapError(
          Agents.register(agent, module.context),
          (error) => new UsageError({ message: `--register ${module.specifier}: its agent: ${describe(error)}` })
        )
      }
    }
    return new Set(names)
  })

/**
 * Refuses to undo a saga while a step it would run the undo of has no tool in this process: undoing
 * the saga here would report it `unavailable` and leave its effect live. A step journaled as
 * changing nothing (a model turn, a read) or as irreversible, or one an explicit undo's run answers
 * for, is not one (`owingUndo`).
 *
 * @since 0.1.0
 * @category registering
 */
export const requireUndos = (command: string, status: Saga.SagaStatus, registered: ReadonlySet<string>) =>
  Effect.flatMap(owingUndo(status), (owing) => {
    const missing = owing.filter((step) => !registered.has(step.toolName))
    if (missing.length === 0) return Effect.void
    const names = Array.from(new Set(missing.map((step) => step.toolName)))
    return Effect.fail(
      new UsageError({
        message: `${command} would undo saga ${status.sagaId}, but this process has no tool for ${missing.length} executed step(s) (${names.join(", ")}): pass --register MODULE with the saga's tools (nothing was written)`
      })
    )
  })
