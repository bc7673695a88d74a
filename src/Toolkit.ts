/**
 * A record of tools looked up by name, as an agent does, validated before anything runs.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import type * as Compensable from "./Compensable.js"
import { DeclarationError, InvalidInput } from "./Compensable.js"
import { type CurrentSaga, callStep } from "./internal/engine/context.js"
import { problemOf, warningOf } from "./internal/engine/declaration.js"
import { decodeJson, jsonText, problemIn } from "./internal/util/codec.js"
import { Saga } from "./Saga.js"

/**
 * The type id a toolkit's errors carry: `isUnknownTool` checks it, never a `_tag` that a plain
 * value could share.
 *
 * @since 0.2.0
 * @category type ids
 */
export const ErrorTypeId: unique symbol = Symbol.for("effect-saga/Toolkit/Error")

/**
 * @since 0.2.0
 * @category type ids
 */
export type ErrorTypeId = typeof ErrorTypeId

/**
 * A call named a tool the toolkit does not have.
 *
 * @since 0.1.0
 * @category errors
 */
export class UnknownTool extends Schema.TaggedError<UnknownTool>("effect-saga/UnknownTool")("UnknownTool", {
  toolName: Schema.String,
  known: Schema.Array(Schema.String)
}) {
  /** @since 0.2.0 */
  get [ErrorTypeId](): ErrorTypeId {
    return ErrorTypeId
  }
  override get message(): string {
    return `no tool ${this.toolName} in this toolkit (it has: ${this.known.join(", ")})`
  }
}

/**
 * Whether a value is an `UnknownTool`, by its `ErrorTypeId`.
 *
 * @since 0.2.0
 * @category guards
 */
export const isUnknownTool = (u: unknown): u is UnknownTool => Predicate.hasProperty(u, ErrorTypeId)

/**
 * A toolkit: its tools by name.
 *
 * @since 0.1.0
 * @category models
 */
export interface Toolkit<Tools extends Record<string, Compensable.Any>> {
  readonly tools: Tools
  readonly byName: ReadonlyMap<string, Compensable.Any>
}

/**
 * What `call` answers over a toolkit's tools: the union of their results. A tool whose result is
 * known at run time only (a manifest's, `Manifest.ManifestTool`), or that is only `Compensable.Any`,
 * answers `unknown`.
 *
 * @since 0.4.0
 * @category models
 */
export type CallSuccess<Tools extends Record<string, Compensable.Any>> = {
  [K in keyof Tools]: Tools[K] extends (...args: any) => Effect.Effect<infer A, any, any> ? A : unknown
}[keyof Tools]

/**
 * What `call` fails with over a toolkit's tools: `UnknownTool`, `InvalidInput`, and the union of
 * their errors (each tool's own, `Outcome.Failed` and `StepError`; a manifest's tool's,
 * `Manifest.ManifestToolError`). A tool that is only `Compensable.Any` says nothing of its errors:
 * `unknown`.
 *
 * @since 0.4.0
 * @category models
 */
export type CallError<Tools extends Record<string, Compensable.Any>> =
  | UnknownTool
  | InvalidInput
  | {
      [K in keyof Tools]: Tools[K] extends (...args: any) => Effect.Effect<any, infer E, any> ? E : unknown
    }[keyof Tools]

/**
 * What `call` needs over a toolkit's tools: `CurrentSaga` and the union of what their calls need (a
 * manifest's tool, `Manifest.ManifestProcesses`, which `Manifest.layer` provides). A tool that is
 * only `Compensable.Any` needs nothing more.
 *
 * @since 0.4.0
 * @category models
 */
export type CallRequirements<Tools extends Record<string, Compensable.Any>> =
  | CurrentSaga
  | {
      [K in keyof Tools]: Tools[K] extends (...args: any) => Effect.Effect<any, any, infer R> ? R : never
    }[keyof Tools]

/**
 * What `layer` needs besides `Saga`: what the toolkit's undos need (`Compensable.UndoRequirements`),
 * since an undo that an operator's `Saga.compensate` runs runs in the context of the layer's build.
 *
 * @since 0.4.0
 * @category models
 */
export type UndoRequirements<Tools extends Record<string, Compensable.Any>> = {
  [K in keyof Tools]: Compensable.UndoRequirements<Tools[K]>
}[keyof Tools]

/**
 * Builds a toolkit. Nothing is checked yet: `validate` or `layer` does that.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <Tools extends Record<string, Compensable.Any>>(tools: Tools): Toolkit<Tools> => ({
  tools,
  byName: new Map(Object.values(tools).map((tool) => [tool.name, tool]))
})

/**
 * Checks every declaration: unique names, no undo on an irreversible tool, schemas that encode to
 * JSON. Fails with the first `DeclarationError`; returns the warnings.
 *
 * @since 0.1.0
 * @category validation
 */
export const validate = <Tools extends Record<string, Compensable.Any>>(
  toolkit: Toolkit<Tools>
): Effect.Effect<ReadonlyArray<string>, DeclarationError> =>
  Effect.suspend(() => {
    const seen = new Set<string>()
    const warnings: Array<string> = []
    for (const tool of Object.values(toolkit.tools)) {
      if (seen.has(tool.name)) {
        return Effect.fail(new DeclarationError({ toolName: tool.name, reason: "two tools share this name" }))
      }
      seen.add(tool.name)
      const problem = problemOf(tool.spec)
      if (problem !== undefined) return Effect.fail(new DeclarationError({ toolName: tool.name, reason: problem }))
      const warning = warningOf(tool.spec)
      if (warning !== undefined) warnings.push(warning)
    }
    return Effect.succeed(warnings)
  })

/**
 * What validating says about one tool: `problem`, why its declaration cannot work (undo on an
 * irreversible tool, a schema that cannot encode to JSON…), and `warning`, what is worth logging
 * (an undo whose success schema carries nothing it could target). Both `undefined` when all is well.
 *
 * @since 0.2.0
 * @category validation
 */
export const checkTool = (
  tool: Pick<Compensable.Any, "spec">
): { readonly problem: string | undefined; readonly warning: string | undefined } => ({
  problem: problemOf(tool.spec),
  warning: warningOf(tool.spec)
})

/**
 * Validates the toolkit when the Layer is built (a typo fails on boot, not during a refund), logs
 * its warnings, and registers its undos with the `Saga` service so `Saga.compensate` can run them.
 * It needs what the undos need (`UndoRequirements`, since 0.4.0): an undo that an operator's
 * `Saga.compensate` runs runs in the context of this build.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = <Tools extends Record<string, Compensable.Any>>(
  toolkit: Toolkit<Tools>
): Layer.Layer<never, DeclarationError, Saga | UndoRequirements<Tools>> =>
  Layer.effectDiscard(
    Effect.gen(function* () {
      const warnings = yield* validate(toolkit)
      for (const warning of warnings) yield* Effect.logWarning(warning)
      const saga = yield* Saga
      yield* saga.register(Object.values(toolkit.tools))
    })
  )

/**
 * Calls a tool by name with its input in encoded (JSON) form, as a model's tool call arrives. A name
 * the toolkit lacks fails with `UnknownTool`; an input that is not JSON (a cycle, a `BigInt`) or does
 * not decode, with `InvalidInput`: nothing is journaled or run. Otherwise it answers, fails and
 * needs as the tool's call does; the type is the union over the tools (`CallSuccess`, `CallError`,
 * `CallRequirements`, since 0.4.0).
 *
 * @since 0.1.0
 * @category calling
 */
export const call = <Tools extends Record<string, Compensable.Any>>(
  toolkit: Toolkit<Tools>,
  name: string,
  input: unknown,
  options?: Compensable.CallOptions
): Effect.Effect<CallSuccess<Tools>, CallError<Tools>, CallRequirements<Tools>> =>
  Effect.suspend(() => {
    const tool = toolkit.byName.get(name)
    if (tool === undefined)
      return Effect.fail(new UnknownTool({ toolName: name, known: Array.from(toolkit.byName.keys()) }))
    // What JSON would not hold as it is (a Map, NaN, a key named `__proto__`, which decoding would
    // make the input's prototype) is refused, as a call's input is: the tool is given what the JSON holds.
    const text = Either.flatMap(jsonText(input ?? null), (json) => {
      const problem = problemIn(input ?? null)
      return problem === undefined ? Either.right(json) : Either.left(problem)
    })
    const decoded = Either.flatMap(text, (json) => decodeJson(tool.spec.input, json))
    if (Either.isLeft(decoded)) return Effect.fail(new InvalidInput({ toolName: name, reason: decoded.left }))
    return callStep(tool.spec, decoded.right, options?.key) as Effect.Effect<
      CallSuccess<Tools>,
      CallError<Tools>,
      CallRequirements<Tools>
    >
  })
