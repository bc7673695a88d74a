/**
 * The audit after a crash run: what the journal says happened, held against what the world file
 * says really happened. Loading is an Effect (`loadJournal`); the checks are plain functions of
 * what was loaded (`audit`), each naming every saga or key that breaks it.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Journal from "../../src/Journal.js"
import * as Saga from "../../src/Saga.js"
import { planOf } from "./saga.js"
import { storeLayer } from "./store.js"
import type { Call, Direction } from "./world.js"

/** One saga as stored: its entries, and its row and steps as `Saga.status` reports them. */
export interface StoredSaga {
  readonly entries: ReadonlyArray<Journal.Entry>
  readonly status: Saga.SagaStatus
}

/** Every saga in the journal (a file, or a `postgres://` database), oldest update first. */
export const loadJournal = (journalAt: string) =>
  Effect.gen(function* () {
    const journal = yield* Journal.Journal
    const saga = yield* Saga.Saga
    return yield* Effect.forEach(yield* journal.list(), (record) =>
      Effect.all({ entries: journal.read(record.sagaId), status: saga.status(record.sagaId) })
    )
  }).pipe(Effect.provide(Saga.layer.pipe(Layer.provideMerge(storeLayer(journalAt)))))

/** One check and what breaks it (nothing, when it holds). */
export interface Check {
  readonly name: string
  readonly failures: ReadonlyArray<string>
}

/** What the audit counted. */
export interface AuditFigures {
  readonly sagas: number
  readonly byStatus: Record<string, number>
  readonly entriesVerified: number
  /** Steps journaled `EXECUTED`. */
  readonly stepsExecuted: number
  /** Forward calls the providers applied, and received (an idempotent provider ignores a replayed key). */
  readonly forwardEffects: number
  readonly forwardCalls: number
  /** Steps whose first outcome was lost to a crash and that were retried with the same key. */
  readonly retriedAfterUnknown: number
  /** Steps left `INTENT` without an outcome, each reported by a saga that needs attention. */
  readonly unknownSurfaced: number
  /** Undos the providers applied, and undos journaled `COMPENSATED`, `COMPENSATION_UNKNOWN`, `SKIPPED`. */
  readonly undoEffects: number
  readonly undosCompensated: number
  readonly undosUnknown: number
  readonly undosSkipped: number
}

/** The checks and the figures. */
export interface Audit {
  readonly checks: ReadonlyArray<Check>
  readonly figures: AuditFigures
}

/** What a saga's entries say about one step. */
interface StepFacts {
  readonly toolName: string
  intents: number
  executed: boolean
  failed: boolean
  compensating: boolean
  /** The phase that settled its undo: `COMPENSATED`, `COMPENSATION_UNKNOWN`, `SKIPPED`, … */
  undo: Journal.Phase | undefined
}

const undoOutcomes = new Set<Journal.Phase>([
  "COMPENSATED",
  "COMPENSATION_PARTIAL",
  "COMPENSATION_FAILED",
  "COMPENSATION_UNKNOWN",
  "SKIPPED"
])

/** Folds a saga's entries into what each step went through. Written here, not borrowed from src/: it checks src/. */
const stepsOf = (entries: ReadonlyArray<Journal.Entry>): Map<string, StepFacts> => {
  const steps = new Map<string, StepFacts>()
  for (const entry of entries) {
    if (entry.stepId === null) continue
    let step = steps.get(entry.stepId)
    if (step === undefined) {
      step = {
        toolName: entry.toolName ?? "",
        intents: 0,
        executed: false,
        failed: false,
        compensating: false,
        undo: undefined
      }
      steps.set(entry.stepId, step)
    }
    if (entry.phase === "INTENT") step.intents++
    else if (entry.phase === "EXECUTED") step.executed = true
    else if (entry.phase === "FAILED") step.failed = true
    else if (entry.phase === "COMPENSATING") step.compensating = true
    else if (undoOutcomes.has(entry.phase)) step.undo = entry.phase
  }
  return steps
}

const isUnknown = (step: StepFacts) => step.intents > 0 && !step.executed && !step.failed

const payloadOf = (entry: Journal.Entry | undefined): any =>
  entry === undefined || entry.payload === null ? undefined : JSON.parse(entry.payload)

/** A saga with its steps folded, and the facts the checks ask about it. */
interface Folded {
  readonly sagaId: string
  readonly stored: StoredSaga
  readonly steps: Map<string, StepFacts>
  /** Whether the order was planned to fail at its last step, as journaled in `SAGA_STARTED`. */
  readonly plannedToFail: boolean
  /** The step ids the last `SAGA_NEEDS_ATTENTION` entry reported unknown. */
  readonly reportedUnknown: ReadonlySet<string>
}

const fold = (stored: StoredSaga): Folded => {
  const { entries, status } = stored
  const lastAttention = entries.filter((entry) => entry.phase === "SAGA_NEEDS_ATTENTION").pop()
  const unknown: ReadonlyArray<{ stepId: string }> = payloadOf(lastAttention)?.unknown ?? []
  return {
    sagaId: status.sagaId,
    stored,
    steps: stepsOf(entries),
    plannedToFail: payloadOf(entries[0])?.input?.fail === true,
    reportedUnknown: new Set(unknown.map((step) => step.stepId))
  }
}

/** Calls grouped by direction and key: the key names the saga and step (`${sagaId}/${stepId}`, plus `/undo`). */
const byKey = (calls: ReadonlyArray<Call>, direction: Direction) => {
  const grouped = new Map<string, Array<Call>>()
  for (const call of calls) {
    if (call.direction !== direction) continue
    const same = grouped.get(call.key)
    if (same === undefined) grouped.set(call.key, [call])
    else same.push(call)
  }
  return grouped
}

/** The saga and step a key names. */
const stepOfKey = (key: string, sagas: ReadonlyMap<string, Folded>) => {
  const slash = key.indexOf("/")
  const saga = sagas.get(key.slice(0, slash))
  const stepId = key.slice(slash + 1).replace(/\/undo$/, "")
  return { saga, stepId, step: saga?.steps.get(stepId) }
}

const finalOrHuman = new Set(["completed", "compensated", "compensation_failed", "needs_attention"])

/** Runs every check over the journal's sagas and the world's calls. */
export const audit = (stored: ReadonlyArray<StoredSaga>, calls: ReadonlyArray<Call>): Audit => {
  const sagas = new Map(stored.map((saga) => [saga.status.sagaId, fold(saga)]))
  const all = [...sagas.values()]
  const forward = byKey(calls, "forward")
  const undo = byKey(calls, "undo")
  const eachStep = function* () {
    for (const saga of all) for (const [stepId, step] of saga.steps) yield { saga, stepId, step }
  }
  const check = (name: string, failures: Iterable<string>): Check => ({ name, failures: [...failures] })

  const chains = check(
    "1. every saga's hash chain verifies and its row names its last entry",
    all.flatMap(({ sagaId, stored: { entries, status } }) => {
      const verification = Journal.verifyEntries(entries)
      if (verification._tag === "Broken")
        return [`${sagaId}: broken at seq ${verification.seq}: ${verification.reason}`]
      return status.revision === entries.length && status.digest === verification.digest
        ? []
        : [`${sagaId}: the row says revision ${status.revision}, the chain has ${entries.length} entries`]
    })
  )

  const forwardKept = check(
    "2. no executed step lost: every effect in the world is journaled EXECUTED (or unknown and reported), every EXECUTED step's effect is in the world, and a call that is not idempotent is never made twice",
    (function* () {
      for (const [key, received] of forward) {
        const { saga, step } = stepOfKey(key, sagas)
        if (!received.some((call) => call.applied)) continue
        if (step === undefined || step.intents === 0) yield `${key}: applied in the world, no INTENT in the journal`
        else if (step.failed) yield `${key}: applied in the world, journaled FAILED`
        else if (!step.executed && saga!.stored.status.status !== "needs_attention") {
          yield `${key}: applied in the world, unknown in the journal, and the saga is ${saga!.stored.status.status}`
        }
      }
      for (const { saga, stepId, step } of eachStep()) {
        const key = `${saga.sagaId}/${stepId}`
        if (step.executed && !forward.get(key)?.some((call) => call.applied)) {
          yield `${key}: journaled EXECUTED, not in the world`
        }
        const received = forward.get(key)?.length ?? 0
        if (planOf(step.toolName)?.forward === "once" && (received > 1 || step.intents > 1)) {
          yield `${key}: a call that is not idempotent was made ${received} times, journaled INTENT ${step.intents} times`
        }
      }
    })()
  )

  const undoneOnce = check(
    "3. no undo run twice: each applied at most once (called at most once where not idempotent), only after COMPENSATING, and every COMPENSATED undo is in the world",
    (function* () {
      for (const [key, received] of undo) {
        const { step } = stepOfKey(key, sagas)
        const applied = received.filter((call) => call.applied).length
        if (applied > 1) yield `${key}: applied ${applied} times`
        if (planOf(received[0]!.tool)?.undo === "once" && received.length > 1) {
          yield `${key}: an undo that is not idempotent was called ${received.length} times`
        }
        if (step === undefined || !step.compensating) yield `${key}: called without COMPENSATING journaled first`
        if (step !== undefined && !step.executed) yield `${key}: the undo of a step that is not EXECUTED`
      }
      for (const { saga, stepId, step } of eachStep()) {
        const key = `${saga.sagaId}/${stepId}/undo`
        if (step.undo === "COMPENSATED" && !undo.get(key)?.some((call) => call.applied)) {
          yield `${key}: journaled COMPENSATED, not in the world`
        }
      }
    })()
  )

  const unknownSurfaced = check(
    "4. every INTENT without an outcome is reported unknown by a saga that needs attention (a step retryable by its key is retried instead), and every started undo has an outcome",
    (function* () {
      for (const { saga, stepId, step } of eachStep()) {
        const where = `${saga.sagaId} ${stepId}`
        if (step.compensating && step.undo === undefined) yield `${where}: COMPENSATING without an outcome`
        if (!isUnknown(step)) continue
        if (planOf(step.toolName)?.forward === "idempotency-key") {
          yield `${where}: left unknown, though its tool declares retryMode "idempotency-key"`
        }
        const { status, steps } = saga.stored.status
        if (status !== "needs_attention") yield `${where}: unknown, but the saga is ${status}`
        if (!saga.reportedUnknown.has(stepId)) yield `${where}: unknown, not in the saga's NeedsAttention report`
        const reported = steps.find((candidate) => candidate.stepId === stepId)?.state
        if (reported !== "unknown") yield `${where}: unknown, but Saga.status says ${reported}`
      }
    })()
  )

  const settled = check(
    "5. every saga ends completed, compensated, compensation_failed or needs_attention, and nobody holds its lease",
    all.flatMap(({ sagaId, stored: { status } }) => [
      ...(finalOrHuman.has(status.status) ? [] : [`${sagaId}: left ${status.status}`]),
      ...(status.lease === null ? [] : [`${sagaId}: lease still held by ${status.lease.owner}`])
    ])
  )

  const asPlanned = check(
    "6. every saga ends as planned: an order planned to fail compensates, another completes, unless a step needs a human; compensation fails only where a crash hid an undo's outcome",
    all.flatMap(({ plannedToFail, sagaId, steps, stored: { status } }) => {
      const expected = plannedToFail ? ["compensated", "compensation_failed"] : ["completed"]
      const failures = [...expected, "needs_attention"].includes(status.status)
        ? []
        : [`${sagaId}: planned to ${plannedToFail ? "fail" : "complete"}, ended ${status.status}`]
      const lostUndo = [...steps.values()].some((step) => step.undo === "COMPENSATION_UNKNOWN")
      if (status.status === "compensation_failed" && !lostUndo) {
        failures.push(`${sagaId}: compensation failed, and no undo's outcome is unknown`)
      }
      return failures
    })
  )

  const steps = [...eachStep()].map(({ step }) => step)
  const count = (predicate: (step: StepFacts) => boolean) => steps.filter(predicate).length
  const byStatus: Record<string, number> = {}
  for (const { stored } of all) byStatus[stored.status.status] = (byStatus[stored.status.status] ?? 0) + 1
  const flat = (grouped: Map<string, Array<Call>>) => [...grouped.values()].flat()

  return {
    checks: [chains, forwardKept, undoneOnce, unknownSurfaced, settled, asPlanned],
    figures: {
      sagas: all.length,
      byStatus,
      entriesVerified: all.reduce((sum, saga) => sum + saga.stored.entries.length, 0),
      stepsExecuted: count((step) => step.executed),
      forwardEffects: flat(forward).filter((call) => call.applied).length,
      forwardCalls: flat(forward).length,
      retriedAfterUnknown: count((step) => step.intents > 1),
      unknownSurfaced: count(isUnknown),
      undoEffects: flat(undo).filter((call) => call.applied).length,
      undosCompensated: count((step) => step.undo === "COMPENSATED"),
      undosUnknown: count((step) => step.undo === "COMPENSATION_UNKNOWN"),
      undosSkipped: count((step) => step.undo === "SKIPPED")
    }
  }
}
