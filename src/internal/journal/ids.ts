/**
 * The ids the journal is keyed by, and how they are read back: step ids, a step's key across sagas,
 * undo keys, and the id of an explicit undo's run.
 */
import { RUN_SUFFIX } from "../util/identifier.js"

/**
 * A call of a tool: `${toolName}:${key}`, the key the caller's own or taken from the input (`inputKey`).
 * A tool name that holds `:` or `%` has them written `%3A` and `%25` (`stripe%3Acharge:x`): a key
 * may hold `:`, and `pay:card` keyed `x` would otherwise be `pay` keyed `card:x`.
 * Joined, as `stepIdOf` is (see its NOTE): a run keeps each call's id while its saga is in flight.
 */
export const callIdOf = (toolName: string, key: string): string => [toolPart(toolName), ":", key].join("")

/**
 * A call's id as journaled before 0.5.0, its tool name as it is: what a saga journaled then still
 * names its steps of a tool whose name holds `:` or `%` by.
 */
export const legacyCallIdOf = (toolName: string, key: string): string => [toolName, ":", key].join("")

/** Whether a tool's name is written otherwise in its calls' ids than as it is. */
export const isEscapedInIds = (toolName: string): boolean => toolName.includes(":") || toolName.includes("%")

const toolPart = (toolName: string): string =>
  isEscapedInIds(toolName) ? toolName.replaceAll("%", "%25").replaceAll(":", "%3A") : toolName

/** The key of a call made without one: the first 16 hex digits of its encoded input's SHA-256. */
export const inputKey = (inputDigest: string): string => inputDigest.slice(0, 16)

/**
 * A step's id in its saga: its call and its occurrence among identical calls (from 1).
 *
 * NOTE: joined, not a template literal: that would be a rope over `inputKey`'s slice, which keeps
 * the whole 64-digit digest alive, ≈ 180 bytes for every step a journal in memory holds instead of ≈ 50.
 */
export const stepIdOf = (callId: string, occurrence: number): string => [callId, "#", occurrence].join("")

/** Whether `stepId` is an occurrence of call `callId`. */
export const isOccurrenceOf = (stepId: string, callId: string): boolean => stepId.startsWith(`${callId}#`)

/**
 * A step's key across sagas: `${sagaId}/${stepId}`. It is the step's forward idempotency key, the
 * effect id `compensateEffect` names it by, and the id of its approval request (one per step).
 */
export const stepKey = (sagaId: string, stepId: string): string => `${sagaId}/${stepId}`

/** The idempotency key of a step's undo: stable across replays, distinct from the forward key. */
export const undoKey = (sagaId: string, stepId: string): string => `${stepKey(sagaId, stepId)}/undo`

/** The journal id of the run that undoes effect `effectId` on request; its idempotency key too. */
export const runIdOf = (effectId: string): string => `${effectId}${RUN_SUFFIX}`

/** The effect an explicit undo's run undoes, `undefined` for a saga that is no such run. */
export const effectIdOfRun = (sagaId: string): string | undefined =>
  sagaId.endsWith(RUN_SUFFIX) ? sagaId.slice(0, -RUN_SUFFIX.length) : undefined

/** A step key read back as the saga id and step id it may name. */
export interface StepAddress {
  readonly sagaId: string
  readonly stepId: string
}

/**
 * Every way to read `key` as `stepKey(sagaId, stepId)`, the shortest saga id first: a saga id may
 * hold a `/` itself, so only the journal can tell which one names a saga and one of its steps.
 */
export const addressesOf = (key: string): Array<StepAddress> => {
  const addresses: Array<StepAddress> = []
  for (let at = key.indexOf("/"); at > 0; at = key.indexOf("/", at + 1)) {
    addresses.push({ sagaId: key.slice(0, at), stepId: key.slice(at + 1) })
  }
  return addresses
}
