/**
 * `--register MODULE`: the tools whose undos a CLI process may run. A CLI process declares no tools
 * of its own, so without them an undo is `unavailable`; the commands that would undo something
 * (`compensate`, `reject`) refuse to start until every tool they need is registered.
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
import type * as Compensable from "../../Compensable.js"
import * as Saga from "../../Saga.js"
import * as Toolkit from "../../Toolkit.js"
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
  if (Predicate.isObject(value) && Predicate.hasProperty(value, "byName") && value.byName instanceof Map) {
    return Array.from(value.byName.values()).filter(isTool)
  }
  if (Array.isArray(value)) return value.filter(isTool)
  if (Predicate.isObject(value) && !Predicate.isFunction(value) && !Layer.isLayer(value)) {
    return Object.values(value).filter(isTool)
  }
  return []
}

const describe = (error: unknown): string => (error instanceof Error ? error.message : String(error)).split("\n")[0]!

/** A module's tools, and the context its `layer` export (if any) builds for their undos. */
const load = (specifier: string) =>
  Effect.gen(function* () {
    const url = pathToFileURL(path.resolve(specifier)).href
    const exports = yield* Effect.tryPromise({
      try: () => import(url) as Promise<Record<string, unknown>>,
      catch: (error) => new UsageError({ message: `--register ${specifier}: cannot import it: ${describe(error)}` })
    })
    const tools = new Set(Object.values(exports).flatMap(toolsIn))
    if (tools.size === 0) {
      return yield* new UsageError({
        message: `--register ${specifier}: it exports no tools (Compensable tools, toolkits, or arrays or records of them)`
      })
    }
    const context = Layer.isLayer(exports.layer)
      ? yield* Effect.mapError(
          Layer.buildWithScope(exports.layer as Layer.Layer<unknown, unknown>, yield* Effect.scope),
          (error) => new UsageError({ message: `--register ${specifier}: its layer failed: ${describe(error)}` })
        )
      : Context.empty()
    return { tools: Array.from(tools), context }
  })

/**
 * Imports each module, validates its tools as a toolkit (unique names, sound declarations) and
 * registers them with the `Saga` service, their undos to run with the services of the module's
 * `layer` export. Returns the names of the tools registered.
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
    for (const module of loaded) {
      yield* Effect.provide(saga.register(module.tools), module.context as Context.Context<never>)
    }
    return new Set(all.map((tool) => tool.name))
  })

/**
 * The executed steps of a saga whose undo has not run yet, and whose tool is not among `registered`:
 * undoing the saga here would report them `unavailable` and leave their effects live.
 *
 * @since 0.1.0
 * @category registering
 */
export const missingFor = (status: Saga.SagaStatus, registered: ReadonlySet<string>): ReadonlyArray<Saga.StepStatus> =>
  status.steps.filter((step) => step.state === "executed" && step.undo === undefined && !registered.has(step.toolName))

/**
 * Refuses to undo a saga while a step it would undo has no tool in this process.
 *
 * @since 0.1.0
 * @category registering
 */
export const requireUndos = (
  command: string,
  status: Saga.SagaStatus,
  registered: ReadonlySet<string>
): Effect.Effect<void, UsageError> => {
  const missing = missingFor(status, registered)
  if (missing.length === 0) return Effect.void
  const names = Array.from(new Set(missing.map((step) => step.toolName)))
  return Effect.fail(
    new UsageError({
      message: `${command} would undo saga ${status.sagaId}, but this process has no tool for ${missing.length} executed step(s) (${names.join(", ")}): pass --register MODULE with the saga's tools (nothing was written)`
    })
  )
}
