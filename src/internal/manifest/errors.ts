/**
 * The error of a manifest that cannot work (`Manifest` re-exports it: that is its public home).
 */
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import { printable } from "../util/printable.js"

/**
 * The type id `ManifestError` carries: `isManifestError` checks it.
 *
 * @since 0.2.0
 * @category type ids
 */
export const ErrorTypeId: unique symbol = Symbol.for("effect-saga/Manifest/Error")

/**
 * @since 0.2.0
 * @category type ids
 */
export type ErrorTypeId = typeof ErrorTypeId

/**
 * A manifest that cannot be used: `path` is the JSON path of what is wrong
 * (`$.bindings.reserve.effect_contract.compensation.tool`), `reason` says why, `file` which manifest.
 *
 * @since 0.2.0
 * @category errors
 */
export class ManifestError extends Schema.TaggedError<ManifestError>("effect-saga/ManifestError")("ManifestError", {
  file: Schema.optional(Schema.String),
  path: Schema.String,
  reason: Schema.String
}) {
  /** @since 0.2.0 */
  get [ErrorTypeId](): ErrorTypeId {
    return ErrorTypeId
  }
  override get message(): string {
    return `${this.file === undefined ? "manifest" : this.file} at ${this.path}: ${this.reason}`
  }
}

/**
 * Whether a value is a `ManifestError`, by its `ErrorTypeId`.
 *
 * @since 0.2.0
 * @category guards
 */
export const isManifestError = (u: unknown): u is ManifestError => Predicate.hasProperty(u, ErrorTypeId)

/**
 * A JSON path from its segments: `$.bindings["tool:a/b"].args[0]`. A key quoted is escaped as JSON
 * writes it and, past that, as `printable` does (`"a\u007f"`, `"a\u0085"`, `"\u202e"`): JSON leaves
 * DEL, the C1 controls, the line separators and the bidi controls as they are.
 */
export const jsonPath = (segments: ReadonlyArray<PropertyKey>): string =>
  segments.reduce<string>((path, segment) => {
    if (typeof segment === "number") return `${path}[${segment}]`
    const key = String(segment)
    return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? `${path}.${key}` : `${path}[${printable(JSON.stringify(key))}]`
  }, "$")
