/**
 * What a manifest's toolkit must pass when a Layer that runs it is built (`Manifest.layer`, and the
 * handlers of `Agent.fromManifest`): a typo fails on boot, not during a refund.
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import type { ManifestToolkit } from "../../Manifest.js"
import * as Toolkit from "../../Toolkit.js"
import { declarationProblem } from "../engine/declaration.js"
import { launchOf, missingSecret } from "./environment.js"
import { jsonPath, ManifestError } from "./errors.js"

/**
 * Checks that the toolkit could be made (every `ref` given), every command is an executable file
 * and every `cwd` a folder, every secret is set, and every tool's declaration can work (its schemas
 * journalable). Fails with a `ManifestError` naming the JSON path of the first problem; answers the
 * warnings worth logging.
 */
export const check = (manifestToolkit: ManifestToolkit): Effect.Effect<ReadonlyArray<string>, ManifestError> =>
  Effect.gen(function* () {
    const { manifest } = manifestToolkit
    const fail = (path: ReadonlyArray<PropertyKey>, reason: string) =>
      Effect.fail(new ManifestError({ file: manifest.file, path: jsonPath(path), reason }))
    if (manifestToolkit.problem !== undefined) return yield* manifestToolkit.problem
    for (const [name, binding] of Object.entries(manifest.bindings)) {
      const launch = launchOf(binding, manifest.folder)
      if (Either.isLeft(launch)) return yield* fail(["bindings", name, ...launch.left.path], launch.left.reason)
      const missing = yield* missingSecret(binding)
      if (Option.isSome(missing)) {
        const [index, secret] = missing.value
        return yield* fail(["bindings", name, "secrets", index], `the secret ${secret} is not set`)
      }
    }
    // A schema that cannot be journaled is the binding's `input` or `output` type, in the manifest's words.
    for (const tool of Object.values(manifestToolkit.tools)) {
      const schema = declarationProblem(tool.spec)?.schema
      if (schema !== undefined && schema.role !== "failure") {
        const field = schema.role === "input" ? "input" : "output"
        return yield* fail(["bindings", tool.name, field], `its ${field} type cannot be journaled: ${schema.cause}`)
      }
    }
    return yield* Effect.mapError(
      Toolkit.validate(manifestToolkit),
      (error) =>
        new ManifestError({ file: manifest.file, path: jsonPath(["bindings", error.toolName]), reason: error.reason })
    )
  })
