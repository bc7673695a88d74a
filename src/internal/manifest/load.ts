/** Reading a manifest: its text parsed, decoded with its Schema, and its bindings checked together. */
import * as path from "node:path"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import type { Manifest } from "../../Manifest.js"
import { toolNameProblem } from "../util/identifier.js"
import { preview, printable, typeName } from "../util/printable.js"
import { firstDuplicateKey, MAX_NESTING, nestingOf } from "./duplicateKeys.js"
import { jsonPath, ManifestError } from "./errors.js"
import { type Binding, MANIFEST_VERSION, ManifestV1 } from "./format.js"

/** Where a manifest came from: its file, if any, and the folder its relative paths resolve against. */
export interface Origin {
  readonly file?: string | undefined
  readonly folder: string
}

/** Reads the manifest at `file` (relative to the working directory); its folder is the file's. */
export const load = (file: string): Effect.Effect<Manifest, ManifestError, FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const absolute = path.resolve(file)
    const fs = yield* FileSystem.FileSystem
    const bytes = yield* Effect.mapError(
      fs.readFile(absolute),
      (error) => new ManifestError({ file: absolute, path: "$", reason: `cannot be read: ${error.message}` })
    )
    const text = utf8Text(bytes)
    if (text === undefined) {
      const reason = "it is not UTF-8 text (saved in another encoding, such as Latin-1?): save it as UTF-8"
      return yield* new ManifestError({ file: absolute, path: "$", reason })
    }
    return yield* parse(text, { file: absolute, folder: path.dirname(absolute) })
  })

/** `bytes` as text, if they are UTF-8: a name read otherwise (`r\xE9serve` as `r\uFFFDserve`) would name another tool. */
const utf8Text = (bytes: Uint8Array): string | undefined => {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes)
  } catch {
    return undefined
  }
}

/** What a JSON document that is no object is, in words: `an array`, `a string`, `null`. */
const typeOf = (json: unknown): string => (Array.isArray(json) ? "an array" : typeName(json))

/** Parses and checks a manifest's text. */
export const parse = (text: string, origin: Origin): Effect.Effect<Manifest, ManifestError> =>
  Effect.suspend(() => {
    const fail = (segments: ReadonlyArray<PropertyKey>, reason: string) =>
      Effect.fail(new ManifestError({ file: origin.file, path: jsonPath(segments), reason }))
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch (error) {
      return fail([], `not JSON: ${String(error)}`)
    }
    if (!Predicate.isRecord(json)) {
      return fail([], `a manifest is a JSON object with "manifest_version" and "bindings" (got ${typeOf(json)})`)
    }
    const version = json.manifest_version
    const reads = `this effect-saga reads ${JSON.stringify(MANIFEST_VERSION)}`
    if (version === undefined) return fail(["manifest_version"], `manifest_version is missing: ${reads}`)
    if (version !== MANIFEST_VERSION) {
      return fail(
        ["manifest_version"],
        `unknown version ${typeof version === "string" ? preview(version) : printable(String(JSON.stringify(version)))}: ${reads}`
      )
    }
    if (nestingOf(text) > MAX_NESTING) return fail([], `it nests deeper than ${MAX_NESTING} levels`)
    const duplicate = firstDuplicateKey(text)
    if (duplicate !== undefined) {
      const what = duplicate.length === 2 && duplicate[0] === "bindings" ? "two bindings of one tool" : "a repeated key"
      return fail(duplicate, `${what}: JSON keeps only the last, so the manifest is refused`)
    }
    // Decoded into an object, a binding named `__proto__` would set its prototype, not a key.
    const bindings = (json as { bindings?: unknown }).bindings
    if (typeof bindings === "object" && bindings !== null && Object.hasOwn(bindings, "__proto__")) {
      return fail(["bindings", "__proto__"], "not a tool name: __proto__ is reserved")
    }
    const decoded = Schema.decodeUnknownEither(ManifestV1, { onExcessProperty: "error" })(json)
    if (Either.isLeft(decoded)) {
      const [issue] = ParseResult.ArrayFormatter.formatErrorSync(decoded.left)
      return fail(issue?.path ?? [], issue?.message ?? "does not fit effect-saga-manifest-v1")
    }
    const problem = firstProblem(decoded.right.bindings)
    if (problem !== undefined) return fail(problem.path, problem.reason)
    return Effect.succeed({ file: origin.file, folder: origin.folder, bindings: decoded.right.bindings })
  })

interface Problem {
  readonly path: ReadonlyArray<PropertyKey>
  readonly reason: string
}

/** What no binding may declare, alone or with the others. */
const firstProblem = (bindings: Readonly<Record<string, Binding>>): Problem | undefined => {
  for (const [name, binding] of Object.entries(bindings)) {
    const badName = toolNameProblem(name)
    if (badName !== undefined) return { path: ["bindings", name], reason: `not a tool name: ${badName}` }
    const problem = compensationProblem(name, binding, bindings)
    if (problem !== undefined) return problem
  }
  return undefined
}

const compensationProblem = (
  name: string,
  binding: Binding,
  bindings: Readonly<Record<string, Binding>>
): Problem | undefined => {
  const compensation = binding.effect_contract.compensation
  if (compensation === undefined) return undefined
  const at = ["bindings", name, "effect_contract", "compensation"]
  if (binding.effect_contract.kind === "irreversible") {
    return { path: at, reason: "an irreversible binding has no compensation (drop it, or declare kind external_write)" }
  }
  if (binding.effect_contract.kind === "read") {
    return { path: at, reason: "a read changes nothing: it has no compensation" }
  }
  if (compensation.tool === name) return { path: [...at, "tool"], reason: "a binding cannot compensate itself" }
  if (!Object.hasOwn(bindings, compensation.tool)) {
    return { path: [...at, "tool"], reason: `no binding ${preview(compensation.tool)} in this manifest` }
  }
  return undefined
}
