/**
 * The JSON Schema an editor checks a manifest against, with what the format's Schema leaves to the
 * loader said where JSON Schema can say it: a binding's name as a tool's name.
 */
import type * as JSONSchema from "effect/JSONSchema"
import { MAX_TOOL_NAME_BYTES } from "../util/identifier.js"

/**
 * A tool's name as far as JSON Schema can say it (`toolNameProblem` says it whole): not empty, no
 * `/` or control character (C0, DEL, C1), not `__proto__`, and at most as many characters as the
 * loader allows UTF-8 bytes (bytes it cannot count, nor a lone surrogate).
 */
const toolName = {
  type: "string",
  minLength: 1,
  maxLength: MAX_TOOL_NAME_BYTES,
  pattern: "^[^/\\u0000-\\u001f\\u007f-\\u009f]+$",
  not: { const: "__proto__" }
}

/** `schema` (the format's, as `JSONSchema.make` writes it) with its bindings' names held to `toolName`. */
export const withToolNames = (schema: JSONSchema.JsonSchema7Root): JSONSchema.JsonSchema7Root => {
  const manifest = schema.$defs?.ManifestV1 as JSONSchema.JsonSchema7Object
  const bindings = { ...manifest.properties.bindings, propertyNames: toolName } as JSONSchema.JsonSchema7
  const withNames: JSONSchema.JsonSchema7Object = { ...manifest, properties: { ...manifest.properties, bindings } }
  return { ...schema, $defs: { ...schema.$defs, ManifestV1: withNames } }
}
