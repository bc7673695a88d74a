/**
 * The manifest format `effect-saga-manifest-v1` and the handler protocol `effect-saga-handler-v1`,
 * as Schemas: what `Manifest.load` decodes, what a handler is sent and what it must answer.
 */
import * as Schema from "effect/Schema"

/** The version a manifest names in `manifest_version`. */
export const MANIFEST_VERSION = "effect-saga-manifest-v1"

/** The protocol a request names in `protocol`. */
export const PROTOCOL = "effect-saga-handler-v1"

const envName = /^[A-Za-z_][A-Za-z0-9_]*$/

/** The name of an environment variable: letters, digits and `_`, not starting with a digit. */
const EnvName = Schema.String.pipe(
  Schema.pattern(envName, { message: () => "an environment variable's name: letters, digits and _, not a digit first" })
)

/** What a binding's process may have besides its secrets: `network`, or `env:NAME` (a parent variable). */
const Grant = Schema.String.pipe(
  Schema.pattern(/^(network|env:[A-Za-z_][A-Za-z0-9_]*)$/, {
    message: () => 'a grant: "network" or "env:NAME"'
  })
).annotations({
  description: '"network" (a declared capability, journaled) or "env:NAME" (the parent\'s NAME passed through)'
})

/** The shape of a binding's input or output: a few JSON-Schema-like types, or a Schema registered in code. */
export type TypeSpec =
  | { readonly type: "string" | "number" | "integer" | "boolean" | "null" | "json" }
  | {
      readonly type: "object"
      readonly properties: { readonly [key: string]: TypeSpec }
      readonly required?: ReadonlyArray<string> | undefined
    }
  | { readonly type: "array"; readonly items: TypeSpec }
  | { readonly ref: string }

export const TypeSpec: Schema.Schema<TypeSpec> = Schema.Union(
  Schema.Struct({ type: Schema.Literal("string", "number", "integer", "boolean", "null", "json") }),
  Schema.Struct({
    type: Schema.Literal("object"),
    properties: Schema.Record({ key: Schema.String, value: Schema.suspend((): Schema.Schema<TypeSpec> => TypeSpec) }),
    required: Schema.optional(Schema.Array(Schema.String))
  }),
  Schema.Struct({ type: Schema.Literal("array"), items: Schema.suspend((): Schema.Schema<TypeSpec> => TypeSpec) }),
  Schema.Struct({ ref: Schema.String.annotations({ description: "the name of a Schema given to Manifest.toolkit" }) })
).annotations({
  identifier: "TypeSpec",
  description: "a JSON-Schema-like type, or a reference to a Schema registered in code"
})

const PositiveInt = Schema.Int.pipe(Schema.positive())

/** How a binding's handler runs: a process, its arguments and its working folder. */
const ProcessHandler = Schema.Struct({
  kind: Schema.Literal("process"),
  command: Schema.NonEmptyString.annotations({
    description: "an absolute path, a path relative to the manifest's folder, or a name looked up on the PATH"
  }),
  args: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] }),
  cwd: Schema.optional(Schema.String.annotations({ description: "relative to the manifest's folder (its default)" }))
})

/** What the binding's effect is, whether it may be retried with its idempotency key, and its inverse. */
const EffectContract = Schema.Struct({
  kind: Schema.Literal("read", "external_write", "irreversible"),
  retry_mode: Schema.Literal("none", "idempotency_key"),
  compensation: Schema.optional(Schema.Struct({ tool: Schema.String }))
})

/** One tool bound to a handler. */
export const Binding = Schema.Struct({
  description: Schema.optional(Schema.String),
  handler: ProcessHandler,
  input: TypeSpec,
  output: TypeSpec,
  timeout_ms: PositiveInt,
  max_payload_bytes: PositiveInt,
  secrets: Schema.optionalWith(Schema.Array(EnvName), { default: () => [] }),
  grants: Schema.optionalWith(Schema.Array(Grant), { default: () => [] }),
  effect_contract: EffectContract
})

export type Binding = typeof Binding.Type

/** A manifest, version `effect-saga-manifest-v1`. */
export const ManifestV1 = Schema.Struct({
  $schema: Schema.optional(Schema.String),
  manifest_version: Schema.Literal(MANIFEST_VERSION),
  bindings: Schema.Record({ key: Schema.String, value: Binding })
}).annotations({ identifier: "ManifestV1", title: "effect-saga manifest, version 1" })

export type ManifestV1 = typeof ManifestV1.Type

/** The effect a request is about: its saga, step and idempotency key. */
const EffectRef = Schema.Struct({ sagaId: Schema.String, stepId: Schema.String, idempotencyKey: Schema.String })

/** A request, one JSON line on the handler's stdin. */
export const Request = Schema.Struct({
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

export type Request = typeof Request.Type

/** A response, one JSON line on the handler's stdout. */
export const Response = Schema.Struct({
  outcome: Schema.Literal("applied", "failed", "unknown", "partial"),
  result: Schema.optional(Schema.Unknown),
  receipt: Schema.optional(Schema.String),
  message: Schema.optional(Schema.String),
  compensation: Schema.optional(Schema.Literal("completed", "partial"))
}).annotations({ identifier: "HandlerResponse" })

export type Response = typeof Response.Type
