/**
 * A manifest's toolkit as an agent's: one `@effect/ai` tool per binding that is no other's inverse
 * (its parameters the fields of the binding's object input), each call a saga step that runs the
 * binding's process, its undo the compensating binding's process, its policy the binding's effect
 * contract.
 */
import * as Tool from "@effect/ai/Tool"
import * as AiToolkit from "@effect/ai/Toolkit"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Schema from "effect/Schema"
import type { Policies, Undos } from "../../Agent.js"
import type * as Compensable from "../../Compensable.js"
import * as Manifest from "../../Manifest.js"
import { check } from "../manifest/check.js"
import { jsonPath } from "../manifest/errors.js"

/** The tools, undos, policies and handlers `Agent.make` and `toLayer` are given for a manifest. */
export interface Declared {
  readonly toolkit: AiToolkit.Toolkit<Record<string, Tool.Any>>
  readonly undo: Undos<Record<string, Tool.Any>>
  readonly policy: Policies<Record<string, Tool.Any>>
  readonly handlers: Record<string, (params: unknown, step: Compensable.StepContext) => Effect.Effect<unknown, unknown>>
}

/** An agent's tool takes an object: the fields of a binding's input (a `Schema.Struct`), if it has them. */
const fieldsOf = (schema: Schema.Schema<any, any>): Schema.Struct.Fields | undefined =>
  "fields" in schema ? (schema.fields as Schema.Struct.Fields) : undefined

/**
 * The bindings another names as its `compensation.tool`. An inverse runs as the undo of the call it
 * compensates, never as a tool of its own: a model that called it would undo what the saga still
 * counts as applied, and compensation would undo it again.
 */
const inversesOf = (manifest: Manifest.Manifest): ReadonlySet<string> =>
  new Set(
    Object.values(manifest.bindings).flatMap((binding) => {
      const inverse = binding.effect_contract.compensation?.tool
      return inverse === undefined ? [] : [inverse]
    })
  )

/**
 * The bindings that undo one another in a ring, from `name` (`a` undoes `b`, `b` undoes `a`), if
 * its inverses lead back to it: each is another's inverse, so an agent would offer none of them.
 */
const ringFrom = (manifest: Manifest.Manifest, name: string): ReadonlyArray<string> | undefined => {
  const ring = [name]
  for (let next = inverseOf(manifest, name); next !== undefined; next = inverseOf(manifest, next)) {
    if (next === name) return ring
    if (ring.includes(next)) return undefined
    ring.push(next)
  }
  return undefined
}

const inverseOf = (manifest: Manifest.Manifest, name: string): string | undefined =>
  manifest.bindings[name]?.effect_contract.compensation?.tool

/** A ring of inverses, refused: the agent would silently offer none of its bindings. */
const ringRefused = (manifest: Manifest.Manifest, ring: ReadonlyArray<string>) =>
  new Manifest.ManifestError({
    file: manifest.file,
    path: jsonPath(["bindings", ring[0]!, "effect_contract", "compensation", "tool"]),
    reason: `${ring.join(", ")} undo one another (${[...ring, ring[0]].join(" → ")}): an agent is offered no binding that is another's inverse, so it would be offered none of them; give it a binding that no other undoes (a manifest of its own for the agent, say)`
  })

export const declare = (manifestToolkit: Manifest.ManifestToolkit): Effect.Effect<Declared, Manifest.ManifestError> =>
  Effect.gen(function* () {
    if (manifestToolkit.problem !== undefined) return yield* manifestToolkit.problem
    const { manifest } = manifestToolkit
    for (const name of Object.keys(manifest.bindings)) {
      const ring = ringFrom(manifest, name)
      if (ring !== undefined) return yield* ringRefused(manifest, ring)
    }
    const inverses = inversesOf(manifest)
    const tools: Array<Tool.Any> = []
    const declared = {
      undo: {} as Record<string, any>,
      policy: {} as Record<string, any>,
      handlers: {} as Declared["handlers"]
    }
    for (const [name, binding] of Object.entries(manifest.bindings)) {
      if (inverses.has(name)) continue
      const { spec } = manifestToolkit.tools[name]!
      const parameters = fieldsOf(spec.input)
      if (parameters === undefined) {
        return yield* new Manifest.ManifestError({
          file: manifest.file,
          path: jsonPath(["bindings", name, "input"]),
          reason:
            'an agent\'s tool takes an object: declare the input as { "type": "object", … }, or as a { "ref": … } to a Schema.Struct'
        })
      }
      const kind = binding.effect_contract.kind
      tools.push(
        Tool.make(name, { description: binding.description ?? name, parameters, success: spec.success })
          .annotate(Tool.Readonly, kind === "read")
          .annotate(Tool.Destructive, kind === "irreversible")
          .annotate(Tool.Idempotent, spec.retryMode === "idempotency-key")
      )
      if (spec.compensate !== undefined) declared.undo[name] = spec.compensate
      const compensation = binding.effect_contract.compensation
      const compensated =
        compensation !== undefined
          ? `, compensated by ${compensation.tool}`
          : kind === "external_write"
            ? ", no compensation: compensation skips it"
            : ""
      declared.policy[name] = {
        reversibility: spec.reversibility,
        reason: `set by the manifest binding's effect_contract (kind "${kind}"${compensated})`,
        readonly: kind === "read",
        retryMode: spec.retryMode,
        maxPayloadBytes: spec.maxPayloadBytes,
        capabilities: spec.capabilities
      }
      declared.handlers[name] = (params, step) => spec.execute(params, step) as Effect.Effect<unknown, unknown>
    }
    return { toolkit: AiToolkit.make(...tools) as AiToolkit.Toolkit<Record<string, Tool.Any>>, ...declared }
  })

/**
 * The agent's handlers, built only once the manifest passes the checks `Manifest.layer` makes (its
 * commands, folders and secrets, its tools' declarations): a typo fails on boot, not during a
 * refund. The warnings are the agent's to log (its own Layer validates the same tools).
 */
export const checkedFirst = <A, E, R>(
  manifestToolkit: Manifest.ManifestToolkit,
  layer: Layer.Layer<A, E, R>
): Layer.Layer<A, E | Manifest.ManifestError, R> => Layer.unwrapEffect(Effect.as(check(manifestToolkit), layer))
