/**
 * The options of `exploreCrashes`, checked before anything runs: a JavaScript caller's values are not
 * held to the types, and an option the explorer does not know would otherwise explore nothing, or
 * something else than what was asked, and pass.
 */
import * as Layer from "effect/Layer"
import type { ApprovalAnswer, CrashKind, Ending, ExploreOptions } from "../../Testing.js"
import { sagaIdRefusal } from "../util/identifier.js"

const crashKinds: ReadonlyArray<CrashKind> = ["after-write", "before-outcome"]
const approvalAnswers: ReadonlyArray<ApprovalAnswer> = ["approve", "reject", "expire"]
const resolveAnswers: ReadonlyArray<string> = ["truthfully", "applied", "not-applied", "compensate"]
const stores: ReadonlyArray<string> = ["memory", "sqlite"]
const endings: ReadonlyArray<Ending> = [
  "Completed",
  "Compensated",
  "CompensationFailed",
  "AwaitingApproval",
  "NeedsAttention",
  "Suspended"
]

/**
 * A value as a message names it: text quoted, an object or array as JSON (a number JSON cannot
 * hold, `NaN` or `Infinity`, as JavaScript writes it), a function as such, anything else as
 * `String` prints it.
 */
export const show = (value: unknown): string => {
  if (typeof value === "string") return JSON.stringify(value)
  if (typeof value === "function") return "a function"
  if (typeof value !== "object" || value === null) return String(value)
  return asJson(value) ?? String(value)
}

/** JSON of `value` with its non-finite numbers written as JavaScript writes them; none for a cycle. */
const asJson = (value: object): string | undefined => {
  const marker = "\u0000number:"
  try {
    const text = JSON.stringify(value, (_key, inner) =>
      typeof inner === "number" && !Number.isFinite(inner) ? `${marker}${inner}` : inner
    )
    return text?.replace(/"\\u0000number:([^"]*)"/g, "$1")
  } catch {
    return undefined
  }
}

const oneOf = (known: ReadonlyArray<string>) => known.map((value) => JSON.stringify(value)).join(", ")

/** Why `values` is not a list of the `known` values, if it is not: not a list, or a value it does not know. */
const listProblem = (
  name: string,
  values: unknown,
  known: ReadonlyArray<string>,
  empty: "allowed" | "refused"
): string | undefined => {
  if (!Array.isArray(values)) return `${name} must be a list of ${oneOf(known)}, not ${show(values)}`
  if (empty === "refused" && values.length === 0) return `${name} names no ${name === "allow" ? "ending" : "answer"}`
  const at = values.findIndex((value) => !known.includes(value))
  if (at !== -1) return `${name} holds ${show(values[at])}, which is none of ${oneOf(known)}`
  const twice = values.findIndex((value, index) => values.indexOf(value) !== index)
  return twice === -1 ? undefined : `${name} lists ${show(values[twice])} twice`
}

/** Why `invariants` is not a list of `{ name, holds }`, if it is not. */
const invariantsProblem = (invariants: unknown): string | undefined => {
  if (!Array.isArray(invariants)) return `invariants must be a list of { name, holds }, not ${show(invariants)}`
  for (const [index, invariant] of invariants.entries()) {
    const { name, holds } = (invariant ?? {}) as { readonly name?: unknown; readonly holds?: unknown }
    if (typeof name !== "string" || typeof holds !== "function")
      return `invariants[${index}] must be { name: string, holds: (ending) => Effect }`
    if (name.trim() === "") return `invariants[${index}] has a blank name: a failure names the invariant it broke`
  }
  return undefined
}

/** The options `exploreCrashes` knows. */
export const exploreKeys: ReadonlyArray<string> = [
  "world",
  "services",
  "sagaId",
  "allow",
  "invariants",
  "crashes",
  "approvals",
  "resolve",
  "maxPoints",
  "seed",
  "store"
]

/**
 * Why the explorer cannot explore with `options`, if it cannot; `undefined` when every option is one
 * of the `known` and holds a value it knows.
 */
export const optionsProblem = (
  options: ExploreOptions<any, any, any, any>,
  known: ReadonlyArray<string> = exploreKeys
): string | undefined => {
  // From JavaScript anything may come in their place.
  if (typeof options !== "object" || options === null) return `the options must be an object, not ${show(options)}`
  const unknown = Object.keys(options).find((key) => !known.includes(key))
  if (unknown !== undefined) return `${show(unknown)} is no option: the options are ${known.join(", ")}`
  const { allow, approvals, crashes, invariants, maxPoints, resolve, sagaId, seed, services, store, world } = options
  if (!Layer.isLayer(world)) return `world must be a Layer, not ${show(world)}`
  if (services !== undefined && !Layer.isLayer(services)) return `services must be a Layer, not ${show(services)}`
  if (sagaId !== undefined) {
    if (typeof sagaId !== "string") return `sagaId must be a string, not ${show(sagaId)}`
    const refused = sagaIdRefusal(sagaId)
    if (refused !== undefined) return `sagaId ${refused.identifier} cannot be a saga id: ${refused.reason}`
  }
  if (maxPoints !== undefined && !(Number.isInteger(maxPoints) && maxPoints >= 1))
    return `maxPoints must be a whole number of at least 1, not ${show(maxPoints)}`
  if (seed !== undefined && !(typeof seed === "number" && Number.isFinite(seed)))
    return `seed must be a finite number, not ${show(seed)}`
  if (approvals !== undefined) {
    const problem = listProblem("approvals", approvals, approvalAnswers, "refused")
    if (problem !== undefined) return problem
  }
  if (crashes !== undefined) {
    const problem = listProblem("crashes", crashes, crashKinds, "allowed")
    if (problem !== undefined) return problem
  }
  if (allow !== undefined) {
    const problem = listProblem("allow", allow, endings, "refused")
    if (problem !== undefined) return problem
  }
  if (invariants !== undefined) {
    const problem = invariantsProblem(invariants)
    if (problem !== undefined) return problem
  }
  if (resolve !== undefined && typeof resolve !== "function" && !resolveAnswers.includes(resolve as string))
    return `resolve must be one of ${oneOf(resolveAnswers)} or a function, not ${show(resolve)}`
  if (store !== undefined && !stores.includes(store)) return `store must be one of ${oneOf(stores)}, not ${show(store)}`
  return undefined
}
