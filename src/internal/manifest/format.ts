/**
 * The manifest format `effect-saga-manifest-v1` and the handler protocol `effect-saga-handler-v1`,
 * as Schemas: what `Manifest.load` decodes, what a handler is sent and what it must answer
 * (`Manifest` re-exports them: that is their public home).
 */
import * as Schema from "effect/Schema"
import { preview } from "../util/printable.js"
import { got, oneOf, positiveInteger, typeSpecProblem } from "./allowed.js"

/**
 * The version a manifest names in `manifest_version`.
 *
 * @since 0.2.0
 * @category format
 */
export const MANIFEST_VERSION = "effect-saga-manifest-v1"

/**
 * The protocol a handler is spoken to in: the `protocol` of every request.
 *
 * @since 0.2.0
 * @category protocol
 */
export const PROTOCOL = "effect-saga-handler-v1"

const envName = /^[A-Za-z_][A-Za-z0-9_]*$/

/** The name of an environment variable: letters, digits and `_`, not starting with a digit. */
const EnvName = Schema.String.pipe(
  Schema.pattern(envName, { message: () => "an environment variable's name: letters, digits and _, not a digit first" })
).annotations({
  title: "secret",
  description: "an environment variable's name: letters, digits and _, not a digit first"
})

/**
 * The array `field` of `names` none of which repeats: a repeat is refused at its index, saying what
 * it is and where it was first (`the secret TOKEN is listed twice (first at secrets[0])`).
 */
const withoutRepeats = (field: string, names: Schema.Schema<string>, repeated: (name: string) => string) =>
  Schema.Array(names)
    .pipe(
      Schema.filter((given) => {
        const index = given.findIndex((name, at) => given.indexOf(name) !== at)
        if (index === -1) return undefined
        const name = given[index]!
        return { path: [index], message: `${repeated(name)} (first at ${field}[${given.indexOf(name)}])` }
      })
    )
    .annotations({ jsonSchema: { uniqueItems: true } })

/** What a binding's process may have besides its secrets: `network`, or `env:NAME` (a parent variable). */
const Grant = Schema.String.pipe(
  Schema.pattern(/^(network|env:[A-Za-z_][A-Za-z0-9_]*)$/, {
    message: () => 'a grant: "network" or "env:NAME"'
  }),
  // A grant is journaled as a capability, which is at most 200 characters: refused here, at its place.
  Schema.maxLength(200, {
    message: (issue) =>
      `a grant is at most 200 characters, as a capability is (got ${String(issue.actual).length}): it is journaled as one`
  })
).annotations({
  title: "grant",
  description: '"network" (a declared capability, journaled) or "env:NAME" (the parent\'s NAME passed through)'
})

/**
 * A binding's input or output type: `{ "type": "string" | "number" | "integer" | "boolean" | "null" |
 * "json" }`, `{ "type": "object", "properties": {…}, "required": […] }`, `{ "type": "array", "items": … }`,
 * or `{ "ref": "Name" }`, a Schema given to `Manifest.toolkit`.
 *
 * @since 0.2.0
 * @category format
 */
export type TypeSpec =
  | { readonly type: "string" | "number" | "integer" | "boolean" | "null" | "json" }
  | {
      readonly type: "object"
      readonly properties: { readonly [key: string]: TypeSpec }
      readonly required?: ReadonlyArray<string> | undefined
    }
  | { readonly type: "array"; readonly items: TypeSpec }
  | { readonly ref: string }

/**
 * The Schema of a `TypeSpec`.
 *
 * @since 0.2.0
 * @category format
 */
export const TypeSpec: Schema.Schema<TypeSpec> = Schema.Union(
  Schema.Struct({ type: Schema.Literal("string", "number", "integer", "boolean", "null", "json") }),
  Schema.Struct({
    type: Schema.Literal("object"),
    properties: Schema.Record({ key: Schema.String, value: Schema.suspend((): Schema.Schema<TypeSpec> => TypeSpec) }),
    required: Schema.optional(withoutRepeats("required", Schema.String, (name) => `${preview(name)} is required twice`))
  }).pipe(
    // Said by the union's message (`typeSpecProblem`), as the other problems of a type's own level.
    Schema.filter(({ properties, required }) => (required ?? []).every((name) => Object.hasOwn(properties, name)))
  ),
  Schema.Struct({ type: Schema.Literal("array"), items: Schema.suspend((): Schema.Schema<TypeSpec> => TypeSpec) }),
  Schema.Struct({ ref: Schema.String.annotations({ description: "the name of a Schema given to Manifest.toolkit" }) })
).annotations({
  identifier: "TypeSpec",
  description: "a JSON-Schema-like type, or a reference to a Schema registered in code",
  // A `type` none of the alternatives has is said once, with every name; a problem deeper is theirs.
  message: (issue) => {
    const problem = typeSpecProblem(issue.actual)
    return problem === undefined ? { message: "", override: false } : { message: problem, override: true }
  }
})

/** How a binding's handler runs: a process, its arguments and its working folder. */
const ProcessHandler = Schema.Struct({
  kind: oneOf("kind", "process"),
  command: Schema.NonEmptyString.annotations({
    title: "command",
    description: "an absolute path, a path relative to the manifest's folder, or a name looked up on the PATH"
  }),
  args: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] }),
  cwd: Schema.optional(Schema.String.annotations({ description: "relative to the manifest's folder (its default)" }))
})

/** What the binding's effect is, whether it may be retried with its idempotency key, and its inverse. */
const EffectContract = Schema.Struct({
  kind: oneOf("kind", "read", "external_write", "irreversible"),
  retry_mode: oneOf("retry_mode", "none", "idempotency_key"),
  compensation: Schema.optional(Schema.Struct({ tool: Schema.String }))
})

/** One tool bound to a handler. */
const BindingFields = Schema.Struct({
  description: Schema.optional(Schema.String),
  handler: ProcessHandler,
  input: TypeSpec,
  output: TypeSpec,
  timeout_ms: positiveInteger("timeout_ms"),
  max_payload_bytes: positiveInteger("max_payload_bytes"),
  secrets: Schema.optionalWith(
    withoutRepeats("secrets", EnvName, (name) => `the secret ${name} is listed twice`),
    { default: () => [] }
  ),
  grants: Schema.optionalWith(
    withoutRepeats("grants", Grant, (grant) => `the grant ${grant} is listed twice`),
    { default: () => [] }
  ),
  effect_contract: EffectContract
})

/**
 * A binding as decoded (`args`, `secrets` and `grants` default to empty).
 *
 * @since 0.2.0
 * @category format
 */
export type Binding = typeof BindingFields.Type

/**
 * The Schema of one binding: its process, types, limits, secrets, grants and effect contract.
 *
 * @since 0.2.0
 * @category format
 */
export const Binding: Schema.Schema<Binding, typeof BindingFields.Encoded> = BindingFields

/** A manifest's fields. */
const ManifestFields = Schema.Struct({
  $schema: Schema.optional(Schema.String),
  manifest_version: Schema.Literal(MANIFEST_VERSION),
  bindings: Schema.propertySignature(
    Schema.Record({ key: Schema.String, value: BindingFields }).annotations({
      message: (issue) =>
        typeof issue.actual === "object" && issue.actual !== null && !Array.isArray(issue.actual)
          ? { message: "", override: false }
          : { message: `bindings is an object of bindings by tool name (got ${got(issue.actual)})`, override: true }
    })
  ).annotations({ missingMessage: () => "bindings is missing: it is an object of bindings by tool name" })
}).annotations({ identifier: "ManifestV1", title: "effect-saga manifest, version 1" })

/**
 * A manifest document as decoded.
 *
 * @since 0.2.0
 * @category format
 */
export type ManifestV1 = typeof ManifestFields.Type

/**
 * The Schema of a manifest, version `effect-saga-manifest-v1`.
 *
 * @since 0.2.0
 * @category format
 */
export const ManifestV1: Schema.Schema<ManifestV1, typeof ManifestFields.Encoded> = ManifestFields

/** The effect a request is about: its saga, step and idempotency key. */
const EffectRef = Schema.Struct({ sagaId: Schema.String, stepId: Schema.String, idempotencyKey: Schema.String })

/**
 * A handler's request, one JSON line on its stdin: `operation` `execute` or `compensate`, the
 * `tool`, its encoded `input`, the `effect` (saga, step, idempotency key) and, for a compensation,
 * the original input, result and receipt.
 *
 * @since 0.2.0
 * @category protocol
 */
export const HandlerRequest = Schema.Struct({
  protocol: Schema.Literal(PROTOCOL),
  operation: Schema.Literal("execute", "compensate"),
  tool: Schema.String,
  input: Schema.Unknown,
  effect: EffectRef,
  compensation: Schema.optional(
    Schema.Struct({
      originalInput: Schema.Unknown,
      originalResult: Schema.Unknown,
      originalReceipt: Schema.optional(Schema.String)
    })
  )
}).annotations({ identifier: "HandlerRequest" })

/**
 * A handler's request as decoded.
 *
 * @since 0.2.0
 * @category protocol
 */
export type HandlerRequest = typeof HandlerRequest.Type

/**
 * A handler's response, one JSON line on its stdout: its `outcome`, and its `result`, `receipt`,
 * `message`, `compensation`.
 *
 * @since 0.2.0
 * @category protocol
 */
export const HandlerResponse = Schema.Struct({
  outcome: Schema.Literal("applied", "failed", "unknown", "partial"),
  result: Schema.optional(Schema.Unknown),
  receipt: Schema.optional(Schema.String),
  message: Schema.optional(Schema.String),
  compensation: Schema.optional(Schema.Literal("completed", "partial"))
}).annotations({ identifier: "HandlerResponse" })

/**
 * A handler's response as decoded.
 *
 * @since 0.2.0
 * @category protocol
 */
export type HandlerResponse = typeof HandlerResponse.Type
