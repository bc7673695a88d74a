/**
 * What an import accepts: a saga id, step ids, tool names and times of the shapes the engine
 * journals, and no other. A saga imported with another could be listed, even approved, and never
 * run, resumed or undone (`Saga.run` refuses its id), or would show a step under a tool it is not of.
 */
import type { Entry } from "../../Journal.js"
import * as identifier from "../util/identifier.js"
import { JournalCorrupted } from "./errors.js"
import { callIdOf, effectIdOfRun, legacyCallIdOf } from "./ids.js"

/** The occurrence that ends a step id: `#1`, `#2`, … */
const occurrencePattern = /#([1-9]\d*)$/

/**
 * Why `stepId` is not `<tool name>:<key>#<occurrence>` of tool `toolName` as the engine makes it
 * (the key a call's own, as `Saga.run` accepts one, or taken from its input), if it is not.
 */
const stepOfToolProblem = (stepId: string, toolName: string): string | undefined => {
  // A tool name with `:` or `%` is escaped in step ids since 0.5.0, as it is before.
  const prefix = [callIdOf(toolName, ""), legacyCallIdOf(toolName, "")].find((start) => stepId.startsWith(start))
  if (prefix === undefined) {
    return `it is not a step of the entry's tool ${identifier.preview(toolName)}: a step id is <tool name>:<key>#<occurrence>`
  }
  const occurrence = occurrencePattern.exec(stepId)
  if (occurrence === null)
    return "it does not end with its occurrence (#1, #2, …): a step id is <tool name>:<key>#<occurrence>"
  const keyProblem = identifier.stepKeyProblem(stepId.slice(prefix.length, occurrence.index))
  return keyProblem === undefined ? undefined : `its key cannot be one: ${keyProblem}`
}

/**
 * Why `stepId` is no step id of any tool, if it is none: the step an explicit undo's run names,
 * whose tool only its entries say. A tool name may hold `:`, so every `:` is tried.
 */
const stepProblem = (stepId: string): string | undefined => {
  const problem = identifier.identifierProblem(stepId, identifier.MAX_JOURNAL_ID_BYTES)
  if (problem !== undefined) return problem
  let first: string | undefined
  for (let at = stepId.indexOf(":"); at > 0; at = stepId.indexOf(":", at + 1)) {
    const toolName = stepId.slice(0, at)
    const found = identifier.toolNameProblem(toolName) ?? stepOfToolProblem(stepId, toolName)
    if (found === undefined) return undefined
    first ??= found
  }
  return first ?? "it names no tool: a step id is <tool name>:<key>#<occurrence>"
}

/** An explicit undo's run read from its journal id: the saga and the step whose effect it undoes. */
interface UndoRun {
  readonly sagaId: string
  readonly stepId: string
}

/**
 * Why `sagaId` is not an id the engine journals a saga under, if it is not: one `Saga.run` accepts,
 * or an explicit undo's run `<saga id>/<step id>/compensate-effect` (a step id holds no `/`).
 */
const sagaIdProblem = (sagaId: string): string | undefined => {
  const problem = identifier.identifierProblem(sagaId, identifier.MAX_JOURNAL_ID_BYTES)
  if (problem !== undefined) return problem
  const effectId = effectIdOfRun(sagaId)
  if (effectId === undefined) return identifier.sagaIdRefusal(sagaId)?.reason
  const run = undoRunOf(effectId)
  if (run === undefined) {
    return `it ends with "${identifier.RUN_SUFFIX}" but names no effect before it: an explicit undo's run is <saga id>/<step id>${identifier.RUN_SUFFIX}`
  }
  const owner = identifier.sagaIdRefusal(run.sagaId)?.reason
  if (owner !== undefined)
    return `it is the explicit undo's run of a step of saga ${identifier.preview(run.sagaId)}, which cannot be one: ${owner}`
  const step = stepProblem(run.stepId)
  return step === undefined
    ? undefined
    : `it is the explicit undo's run of step ${identifier.preview(run.stepId)}, which cannot be one: ${step}`
}

const undoRunOf = (effectId: string): UndoRun | undefined => {
  const at = effectId.lastIndexOf("/")
  return at <= 0 ? undefined : { sagaId: effectId.slice(0, at), stepId: effectId.slice(at + 1) }
}

/** Why an entry's step id and tool name are not a step the engine journals, if they are not. */
const entryStepProblem = (entry: Entry, run: UndoRun | undefined): readonly [string, string] | undefined => {
  if (entry.toolName !== null) {
    const tool = identifier.toolNameProblem(entry.toolName)
    if (tool !== undefined) return ["tool name", tool]
  }
  if (entry.stepId === null) return undefined
  const problem =
    identifier.identifierProblem(entry.stepId, identifier.MAX_JOURNAL_ID_BYTES) ??
    (entry.toolName === null
      ? "it names no tool: the engine journals a step with its tool's name"
      : stepOfToolProblem(entry.stepId, entry.toolName)) ??
    (run === undefined || entry.stepId === run.stepId
      ? undefined
      : `it is not the step ${identifier.preview(run.stepId)} whose undo this run is`)
  return problem === undefined ? undefined : ["step id", problem]
}

/** Why `at` is not a time as the engine journals one (`Date.prototype.toISOString`), if it is not. */
const timeProblem = (at: string): string | undefined => {
  const millis = Date.parse(at)
  return Number.isFinite(millis) && new Date(millis).toISOString() === at
    ? undefined
    : `${identifier.preview(at)} is not an ISO-8601 UTC time as the engine writes one (2025-01-31T12:00:00.000Z)`
}

/**
 * The first saga id, step id, tool name or time of an export (`entries`, one saga's, in line order)
 * that the engine would not have journaled, as `JournalCorrupted` naming its line.
 */
export const refusedImport = (entries: ReadonlyArray<Entry>): JournalCorrupted | undefined => {
  const sagaId = entries[0]!.sagaId
  const refuse = (line: number, what: string, problem: string) =>
    new JournalCorrupted({
      sagaId: identifier.preview(sagaId),
      seq: line,
      reason: `line ${line}: its ${what} cannot be journaled: ${problem}`
    })
  const badSagaId = sagaIdProblem(sagaId)
  if (badSagaId !== undefined) return refuse(1, "saga id", badSagaId)
  const effectId = effectIdOfRun(sagaId)
  const run = effectId === undefined ? undefined : undoRunOf(effectId)
  for (const [index, entry] of entries.entries()) {
    const badStep = entryStepProblem(entry, run)
    if (badStep !== undefined) return refuse(index + 1, badStep[0], badStep[1])
    const badTime = timeProblem(entry.at)
    if (badTime !== undefined) return refuse(index + 1, "time", badTime)
  }
  return undefined
}
