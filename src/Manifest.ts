/**
 * Tools bound to external process handlers by a JSON manifest (`effect-saga-manifest-v1`): each
 * binding names a command, its limits (`timeout_ms`, `max_payload_bytes`), the secrets and grants
 * its environment receives, and an effect contract (its kind, its retry mode, the binding that
 * compensates it). Handlers speak `effect-saga-handler-v1`: one JSON line in, one JSON line out
 * (`effect-saga/handler` does it for Node). See docs/manifest.md.
 *
 * @since 0.2.0
 */
import * as CommandExecutor from "@effect/platform/CommandExecutor"
import type * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as JSONSchema from "effect/JSONSchema"
import * as Layer from "effect/Layer"
import type * as Schema from "effect/Schema"
import type * as Compensable from "./Compensable.js"
import { check } from "./internal/manifest/check.js"
import * as errors from "./internal/manifest/errors.js"
import type { Binding } from "./internal/manifest/format.js"
import * as format from "./internal/manifest/format.js"
import { withToolNames } from "./internal/manifest/jsonSchema.js"
import * as loading from "./internal/manifest/load.js"
import { ManifestProcesses } from "./internal/manifest/processes.js"
import { toolsOf } from "./internal/manifest/tools.js"
import type * as Outcome from "./Outcome.js"
import { Saga } from "./Saga.js"
import * as Toolkit from "./Toolkit.js"

export { ErrorTypeId, isManifestError, ManifestError } from "./internal/manifest/errors.js"
export {
  Binding,
  HandlerRequest,
  HandlerResponse,
  MANIFEST_VERSION,
  ManifestV1,
  PROTOCOL,
  TypeSpec
} from "./internal/manifest/format.js"
export { ManifestProcesses } from "./internal/manifest/processes.js"

/**
 * The JSON Schema of `ManifestV1` (draft 2020-12: it uses `$defs`, and keywords beside a `$ref`,
 * which draft 07 would ignore), for editors: a manifest's `"$schema"` may point to a copy. A
 * binding's name is held to a tool name's rules as far as JSON Schema can say them
 * (`propertyNames`: not empty, no `/` or control character, not `__proto__`, at most 128
 * characters): the loader counts 128 UTF-8 bytes, and refuses a lone surrogate, which a schema
 * cannot. Nor can it say that a type's `required` names are among its `properties`; the loader does.
 *
 * @since 0.2.0
 * @category format
 */
export const jsonSchema: JSONSchema.JsonSchema7Root = withToolNames(
  JSONSchema.make(format.ManifestV1, { target: "jsonSchema2020-12" })
)

/**
 * A manifest that decoded and whose bindings agree with each other: its `file`, the `folder` its
 * relative paths resolve against, and its bindings by tool name.
 *
 * @since 0.2.0
 * @category models
 */
export interface Manifest {
  readonly file: string | undefined
  readonly folder: string
  readonly bindings: Readonly<Record<string, Binding>>
}

/**
 * Reads and checks the manifest at `file`: JSON, the version, no key twice in an object (no two
 * bindings of one tool), the Schema (no unknown field), a compensation that names another binding of
 * the manifest and is not on an irreversible or read binding. Its folder is the file's. A field given
 * a value it does not allow, or none, fails naming every value it allows and what it got.
 *
 * @since 0.2.0
 * @category constructors
 */
export const load: (file: string) => Effect.Effect<Manifest, errors.ManifestError, FileSystem.FileSystem> = loading.load

/**
 * Checks a manifest's text as `load` does; relative paths resolve against `folder`.
 *
 * @since 0.2.0
 * @category constructors
 */
export const parse: (
  text: string,
  origin: { readonly folder: string; readonly file?: string | undefined }
) => Effect.Effect<Manifest, errors.ManifestError> = loading.parse

/**
 * What `toolkit` may be given: the Schemas the manifest's `{ "ref": name }` types name.
 *
 * @since 0.2.0
 * @category models
 */
export interface ToolkitOptions {
  readonly schemas?: Readonly<Record<string, Schema.Schema<any, any>>> | undefined
}

/**
 * What a call of a manifest's tool fails with. Its outcome when the handler did not apply it:
 * `Outcome.Failed`, and, from a `read` binding only, `Outcome.Unknown` or `Outcome.Partial` (from any
 * other, these halt the saga `NeedsAttention`: the call never returns). Or a `Compensable.StepError`,
 * before anything is journaled or started: `InvalidInput`, `PayloadTooLarge` (an input over
 * `max_payload_bytes`), `InvalidIdentifier` (a `key` no step can have). `Toolkit.call` adds
 * `UnknownTool` (and `InvalidInput` for arguments that do not decode).
 *
 * @since 0.5.0
 * @category models
 */
export type ManifestToolError = Outcome.Outcome | Compensable.StepError

/**
 * A binding as a tool: it takes and answers what the binding's `input` and `output` types say
 * (`unknown` to the type checker: they are known at run time only), fails with a
 * `ManifestToolError`, and needs `ManifestProcesses` (`Manifest.layer`) to start its process, as its
 * undo does.
 *
 * @since 0.5.0
 * @category models
 */
export interface ManifestTool
  extends Compensable.Tool<string, unknown, unknown, ManifestToolError, ManifestProcesses, ManifestProcesses> {}

/**
 * The toolkit of a manifest: a `Toolkit` (call its tools with `Toolkit.call`), the manifest, and
 * what makes it unusable (`problem`, reported when its `layer` is built). Its tools are
 * `ManifestTool`s (since 0.5.0; `Compensable.Any` before): `Toolkit.call` fails with
 * `UnknownTool | InvalidInput | ManifestToolError` and needs `CurrentSaga | ManifestProcesses`.
 *
 * @since 0.2.0
 * @category models
 */
export interface ManifestToolkit extends Toolkit.Toolkit<Record<string, ManifestTool>> {
  readonly manifest: Manifest
  readonly problem: errors.ManifestError | undefined
}

/**
 * The manifest's bindings as tools, one per binding. A call runs the binding's process, started with
 * the `CommandExecutor` that `Manifest.layer` was built with (the call needs `ManifestProcesses`:
 * provide `layer`); its inverse, when the contract names one, is one call of the compensating
 * binding's process with `operation: "compensate"`. Nothing is checked yet: `layer` does that.
 *
 * @since 0.2.0
 * @category constructors
 */
export const toolkit = (manifest: Manifest, options?: ToolkitOptions): ManifestToolkit => {
  const tools = toolsOf(manifest, options?.schemas ?? {})
  const problem = Either.isLeft(tools)
    ? new errors.ManifestError({
        file: manifest.file,
        path: errors.jsonPath(tools.left.path),
        reason: tools.left.reason
      })
    : undefined
  // `toolsOf` makes each with `Compensable.make`: its call and undo fail only with an `Outcome` and
  // start their process with `ManifestProcesses`' executor (`executorOf`).
  const made = Either.getOrElse(tools, () => ({})) as Record<string, ManifestTool>
  return { ...Toolkit.make(made), manifest, problem }
}

/**
 * Checks the toolkit when the Layer is built and registers its inverses with `Saga` (so that
 * `Saga.compensate` and `compensateEffect` can run them): every `ref` registered, every command an
 * executable file and every `cwd` a folder, every secret set (`Config.redacted`), every schema
 * journalable. Fails with a `ManifestError` naming the JSON path of the first problem.
 *
 * It provides `ManifestProcesses` (since 0.5.0): the `CommandExecutor` it was built with, which the
 * toolkit's calls (in a program it is provided to, a `Recovery` too) and its undos (a run's own, an
 * operator's `Saga.compensate` in this process) start their processes with.
 *
 * @since 0.2.0
 * @category layers
 */
export const layer = (
  manifestToolkit: ManifestToolkit
): Layer.Layer<ManifestProcesses, errors.ManifestError, Saga | CommandExecutor.CommandExecutor> =>
  Layer.effect(
    ManifestProcesses,
    Effect.gen(function* () {
      const warnings = yield* check(manifestToolkit)
      for (const warning of warnings) yield* Effect.logWarning(warning)
      const executor = yield* CommandExecutor.CommandExecutor
      const saga = yield* Saga
      // Registered with the executor: an undo the registry runs starts its process with it too.
      yield* Effect.provideService(saga.register(Object.values(manifestToolkit.tools)), ManifestProcesses, executor)
      return executor
    })
  )
