/**
 * The library's metrics (Effect's `Metric`, so that `@effect/opentelemetry` exports them as they are)
 * and how they are recorded. Nearly everything is read off the entries a saga's writer appends, once
 * they are written: the journal records each event exactly once, so a count follows what happened,
 * not how often a program was replayed. Labels are built once per value and reused (Effect caches a
 * metric's hook by the identity of its label array), so that recording allocates nothing per step.
 */

import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"
import * as MetricLabel from "effect/MetricLabel"
import type {
  AppendError,
  Draft,
  Expected,
  Holder,
  Journal,
  OpenCounts,
  OpenStatus,
  SagaStatus
} from "../../Journal.js"
import * as HeldBack from "../journal/heldBack.js"
import type { Recorded } from "../journal/payloads.js"
import { statusAfter } from "../journal/status.js"
import { appendsAtOnce } from "../journal/synchronous.js"
import * as UnreadStart from "../journal/unreadStart.js"
import type { JournalView } from "../journal/view.js"
import { isTakenOver } from "../util/takenOver.js"

/**
 * Whether the library records its metrics. Only the benchmark turns it off, to measure what
 * recording costs: this is not an option, and nothing else may touch it.
 */
export const recording = { enabled: true }

/** Seconds: from 5 ms to 1 minute for a step. */
const stepBoundaries = MetricBoundaries.fromIterable([0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60])

/** Seconds: from 10 ms to a day for a saga (approvals can keep one open for hours). */
const sagaBoundaries = MetricBoundaries.fromIterable([
  0.01,
  0.05,
  0.1,
  0.5,
  1,
  5,
  10,
  30,
  60,
  300,
  900,
  3600,
  4 * 3600,
  24 * 3600
])

const counter = (name: string, description: string) => Metric.counter(name, { description, incremental: true })

/** Sagas started (a `SAGA_STARTED` entry; explicit undos are not sagas). */
export const sagasStarted = counter("effect_saga_sagas_started_total", "Sagas started.")

/** Sagas that ended, by `status`: `completed`, `compensated`, `compensation_failed`. */
export const sagasEnded = counter(
  "effect_saga_sagas_ended_total",
  "Sagas that ended, by status (completed, compensated, compensation_failed)."
)

/** Runs that left their saga waiting, by `status`: `awaiting_approval`, `needs_attention`, `suspended`. */
export const sagasHalted = counter(
  "effect_saga_sagas_halted_total",
  "Sagas that stopped to wait, by status (awaiting_approval, needs_attention, suspended)."
)

/** Seconds from a saga's start to its end, by end `status`. */
export const sagaDuration = Metric.histogram(
  "effect_saga_saga_duration_seconds",
  sagaBoundaries,
  "Seconds from a saga's start to its end (waits for approval included), by end status."
)

/** Steps by `tool` and `outcome`: `executed`, `failed`, `unknown`, `replayed`. */
export const steps = counter(
  "effect_saga_steps_total",
  "Steps by tool and outcome (executed, failed, unknown, replayed from the journal)."
)

/** Seconds from a step's last `INTENT` to its outcome, as journaled, by `tool` (an operator's resolution excluded). */
export const stepDuration = Metric.histogram(
  "effect_saga_step_duration_seconds",
  stepBoundaries,
  "Seconds from a step's last INTENT to its journaled outcome (retries within the run included), by tool."
)

/** Undos by `tool` and `outcome`: `completed`, `partial`, `failed`, `unknown`, `skipped`. */
export const undos = counter(
  "effect_saga_undos_total",
  "Undos by tool and outcome (completed, partial, failed, unknown, skipped)."
)

/** Approvals by `tool` and `decision`: `requested`, `approved`, `rejected`, `expired`, `renewed`, `withdrawn`. */
export const approvals = counter(
  "effect_saga_approvals_total",
  "Approval requests and decisions by tool (requested, approved, rejected, expired, renewed, withdrawn)."
)

/** Recovery passes run. */
export const recoveryPasses = counter("effect_saga_recovery_passes_total", "Recovery passes run.")

/** Sagas a recovery pass claimed to resume. */
export const recoveryClaimed = counter("effect_saga_recovery_claimed_total", "Sagas claimed by recovery passes.")

/** Writes or claims refused because another worker holds the saga's lease. */
export const leaseConflicts = counter(
  "effect_saga_lease_conflicts_total",
  "Claims and appends refused because another worker holds the saga's lease."
)

/** Appends refused because the saga moved on since the writer read it (`ConcurrencyConflict`). */
export const appendConflicts = counter(
  "effect_saga_append_conflicts_total",
  "Appends refused because the saga moved on since it was read (ConcurrencyConflict)."
)

/** Sagas under each open `status`, as the store counted them when last asked. */
export const openSagas = Metric.gauge("effect_saga_open_sagas", {
  description:
    "Sagas under each open status (running, compensating, suspended, awaiting_approval, needs_attention, compensation_failed)."
})

type Labels = ReadonlyArray<MetricLabel.MetricLabel>

/** The labels `key=value`, built once per value. */
const labelsBy = (key: string) => {
  const cache = new Map<string, Labels>()
  return (value: string): Labels => {
    let labels = cache.get(value)
    if (labels === undefined) {
      labels = [MetricLabel.make(key, value)]
      cache.set(value, labels)
    }
    return labels
  }
}

/** The labels `tool=<tool>` and `key=value`, built once per pair. */
const toolLabelsBy = (key: string) => {
  const cache = new Map<string, Map<string, Labels>>()
  return (tool: string, value: string): Labels => {
    let byValue = cache.get(tool)
    if (byValue === undefined) {
      byValue = new Map()
      cache.set(tool, byValue)
    }
    let labels = byValue.get(value)
    if (labels === undefined) {
      labels = [MetricLabel.make("tool", tool), MetricLabel.make(key, value)]
      byValue.set(value, labels)
    }
    return labels
  }
}

const byStatus = labelsBy("status")
const byTool = labelsBy("tool")
const byOutcome = toolLabelsBy("outcome")
const byDecision = toolLabelsBy("decision")
const none: Labels = []

const digits = (text: string, from: number, to: number): number => {
  let n = 0
  for (let i = from; i < to; i++) n = n * 10 + text.charCodeAt(i) - 48
  return n
}

/** Milliseconds into the day of a time as `toISOString` writes it (`YYYY-MM-DDTHH:MM:SS.mmmZ`). */
const millisOfDay = (iso: string): number =>
  digits(iso, 11, 13) * 3_600_000 + digits(iso, 14, 16) * 60_000 + digits(iso, 17, 19) * 1000 + digits(iso, 20, 23)

const sameDay = (a: string, b: string): boolean => {
  for (let i = 0; i < 11; i++) if (a.charCodeAt(i) !== b.charCodeAt(i)) return false
  return a.length === 24 && b.length === 24
}

/**
 * Seconds between two journaled times, 0 when `to` is the earlier: the times may come from two
 * hosts' clocks, or from one that was set back, and a negative observation would pull a
 * histogram's sum (and its mean) below what any saga took, where 0 keeps its count equal to the
 * ends counted. Entries are stamped by `toISOString`: within one day the difference is read off the
 * digits (`Date.parse` would be most of what recording costs).
 */
const seconds = (from: string, to: string): number =>
  Math.max(0, (sameDay(from, to) ? millisOfDay(to) - millisOfDay(from) : Date.parse(to) - Date.parse(from)) / 1000)

/** Who withdraws approvals when a saga compensates (the engine's `WITHDRAWN_BY`). */
const WITHDRAWN_BY = "effect-saga"

const undoOutcomes = {
  COMPENSATED: "completed",
  COMPENSATION_PARTIAL: "partial",
  COMPENSATION_FAILED: "failed",
  COMPENSATION_UNKNOWN: "unknown",
  SKIPPED: "skipped"
} as const

const endStatuses: Partial<Record<Recorded["phase"], SagaStatus>> = {
  SAGA_COMPLETED: "completed",
  SAGA_COMPENSATED: "compensated",
  SAGA_COMPENSATION_FAILED: "compensation_failed"
}

const haltStatuses: Partial<Record<Recorded["phase"], SagaStatus>> = {
  SAGA_AWAITING_APPROVAL: "awaiting_approval",
  SAGA_NEEDS_ATTENTION: "needs_attention",
  SAGA_SUSPENDED: "suspended"
}

/** Whether the journal is an explicit undo's run (`compensateEffect`), not a saga's. */
const isExplicitRun = (view: JournalView): boolean => {
  const started = view.started?.payload
  return started != null && "effectId" in started
}

/** `before`: the saga's status before `entry`. */
const observeSaga = (view: JournalView, entry: Recorded, before: SagaStatus): void => {
  if (isExplicitRun(view)) return
  if (entry.phase === "SAGA_STARTED") {
    sagasStarted.unsafeUpdate(1, none)
    return
  }
  const ended = endStatuses[entry.phase]
  // The same end journaled again with a newer report (a later compensation pass) is not a saga ending again.
  if (ended === before) return
  if (ended !== undefined) {
    sagasEnded.unsafeUpdate(1, byStatus(ended))
    if (view.started !== undefined) sagaDuration.unsafeUpdate(seconds(view.started.at, entry.at), byStatus(ended))
    return
  }
  const halted = haltStatuses[entry.phase]
  if (halted !== undefined) sagasHalted.unsafeUpdate(1, byStatus(halted))
  if (entry.phase === "SAGA_NEEDS_ATTENTION" && "unknown" in entry.payload) {
    for (const step of entry.payload.unknown) steps.unsafeUpdate(1, byOutcome(step.toolName, "unknown"))
  }
}

const observeOutcome = (view: JournalView, entry: Recorded<"EXECUTED" | "FAILED">, tool: string): void => {
  // An operator's resolution of an unknown outcome is neither a step that ran (it was counted
  // `unknown` when the saga stopped on it) nor a duration of the step.
  if (entry.payload.resolvedBy !== undefined) return
  steps.unsafeUpdate(1, byOutcome(tool, entry.phase === "EXECUTED" ? "executed" : "failed"))
  const intent = view.steps.get(entry.stepId!)?.intent
  if (intent !== undefined) stepDuration.unsafeUpdate(seconds(intent.at, entry.at), byTool(tool))
}

const observeStep = (view: JournalView, entry: Recorded): void => {
  const tool = entry.toolName ?? ""
  switch (entry.phase) {
    case "EXECUTED":
    case "FAILED":
      observeOutcome(view, entry, tool)
      break
    case "AWAITING_APPROVAL":
      approvals.unsafeUpdate(1, byDecision(tool, "requested"))
      break
    case "APPROVED":
      approvals.unsafeUpdate(1, byDecision(tool, entry.payload.renewedBy === undefined ? "approved" : "renewed"))
      break
    case "REJECTED":
      approvals.unsafeUpdate(1, byDecision(tool, entry.payload.by === WITHDRAWN_BY ? "withdrawn" : "rejected"))
      break
    case "EXPIRED":
      approvals.unsafeUpdate(1, byDecision(tool, "expired"))
      break
    case "COMPENSATED":
    case "COMPENSATION_PARTIAL":
    case "COMPENSATION_FAILED":
    case "COMPENSATION_UNKNOWN":
    case "SKIPPED":
      // An outcome taken over from compensateEffect was counted where that undo ran.
      if (!isTakenOver(undoDetail(entry.payload))) undos.unsafeUpdate(1, byOutcome(tool, undoOutcomes[entry.phase]))
  }
}

/** The detail an undo's outcome was journaled with: its reason, or what a partial one left. */
const undoDetail = (payload: { readonly reason: string } | { readonly remaining: string } | null) =>
  payload === null ? undefined : "reason" in payload ? payload.reason : payload.remaining

/**
 * Records what `entries`, just appended to the saga `view` follows (and already applied to it), say
 * happened; `before`: the saga's status before them.
 */
export const observeAppended = (view: JournalView, entries: ReadonlyArray<Recorded>, before: SagaStatus): void => {
  if (!recording.enabled) return
  let status = before
  for (const entry of entries) {
    if (entry.stepId === null) {
      observeSaga(view, entry, status)
      status = statusAfter(status, [entry])
    } else observeStep(view, entry)
  }
}

/** Records a step answered from the journal without running again. */
export const observeReplayed = (tool: string): void => {
  if (recording.enabled) steps.unsafeUpdate(1, byOutcome(tool, "replayed"))
}

/** Records a refused claim or append: another worker's lease, or a saga that moved on. */
export const observeRefused = (error: AppendError): void => {
  if (!recording.enabled) return
  if (error._tag === "LeaseHeld") leaseConflicts.unsafeUpdate(1, none)
  else if (error._tag === "ConcurrencyConflict") appendConflicts.unsafeUpdate(1, none)
}

/** Records the sagas a recovery pass claimed to resume, as it claims them (not when the pass ends). */
export const observeRecoveryClaimed = (claimed: number): void => {
  if (recording.enabled && claimed > 0) recoveryClaimed.unsafeUpdate(claimed, none)
}

/** Records a recovery pass that ended (done, or failed part-way by the store). */
export const observeRecoveryPass = (): void => {
  if (recording.enabled) recoveryPasses.unsafeUpdate(1, none)
}

/**
 * Makes each series an alert reads from its first sample at 0: the counters without a tool, each
 * status of the sagas ended and halted. A series that first appears at 1 has no sample before it to
 * increase from, so `increase(…[10m]) > 0` misses the first `compensation_failed` of a process.
 * (A tool's series appear with its first call.) Idempotent: adding 0 changes no count.
 */
export const startSeriesAtZero = (): void => {
  if (!recording.enabled) return
  for (const counter of [sagasStarted, recoveryPasses, recoveryClaimed, leaseConflicts, appendConflicts]) {
    counter.unsafeUpdate(0, none)
  }
  for (const status of Object.values(endStatuses)) sagasEnded.unsafeUpdate(0, byStatus(status))
  for (const status of Object.values(haltStatuses)) sagasHalted.unsafeUpdate(0, byStatus(status))
}

/** Sets the open-sagas gauge to the store's counts. */
export const setOpenSagas = (counts: OpenCounts): void => {
  for (const status of Object.keys(counts) as Array<OpenStatus>)
    openSagas.unsafeUpdate(counts[status], byStatus(status))
}

/** `journal`, its refused claims and appends counted (`observeRefused`). */
export const metered = <J extends Pick<Journal["Type"], "append" | "claim">>(journal: J): J => {
  // Where a new saga is started unread, its first append finding the saga there is how the engine
  // reads it (`unreadStart.ts`): the run starts over, read; that is no conflict.
  const unread = UnreadStart.allows(journal.append)
  const append = (sagaId: string, expected: Expected, drafts: ReadonlyArray<Draft>, holder?: Holder) =>
    Effect.tapError(journal.append(sagaId, expected, drafts, holder), (error) =>
      unread && UnreadStart.foundExisting(error) ? Effect.void : refused(error)
    )
  if (HeldBack.allows(journal.append)) HeldBack.allow(append)
  if (unread) UnreadStart.allow(append)
  const atOnce = appendsAtOnce.get(journal.append)
  if (atOnce !== undefined) {
    appendsAtOnce.set(append, (sagaId, expected, drafts, holder, millis) => {
      const appended = atOnce(sagaId, expected, drafts, holder, millis)
      if (appended !== undefined && Either.isLeft(appended)) observeRefused(appended.left)
      return appended
    })
  }
  const claim = (sagaId: string, holder: Holder) => Effect.tapError(journal.claim(sagaId, holder), refused)
  return { ...journal, append, claim }
}

const refused = (error: AppendError) => Effect.sync(() => observeRefused(error))
