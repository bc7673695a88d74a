/**
 * A saga's journal as a table a person can read: seq, time, step, tool, phase, detail.
 *
 * @since 0.1.0
 */

import * as Either from "effect/Either"
import * as CompensationReport from "./CompensationReport.js"
import type { JournaledReceipt, Recorded } from "./internal/journal/payloads.js"
import { decodeEntry, encodePayload, notStartedIn } from "./internal/journal/payloads.js"
import { JournalView } from "./internal/journal/view.js"
import { table } from "./internal/util/table.js"
import { undoDetailSaid } from "./internal/util/undoSaid.js"
import type { Entry } from "./Journal.js"

/**
 * Where a call that asked for approval without halting (`AWAITING_APPROVAL` with `deferred: true`,
 * written before the decision is known) ran: `made`, where the program made it (the approval was
 * given on the spot: nothing was deferred), or `settled`, once approved, where the program settled
 * it (it was deferred). Unknown until its `INTENT` is read.
 */
type RanWhere = "made" | "settled" | undefined

/** The steps a saga-level entry journals as interrupted before they started, if any: they did not run. */
const notStartedNote = (entry: Recorded): string => {
  const steps = notStartedIn(entry)
  return steps === undefined ? "" : `not started (did not run): ${steps.join(", ")}`
}

/**
 * The steps a run stopped on and why, as its `SAGA_NEEDS_ATTENTION` says: `stopped on chargeCard
 * (chargeCard:…#1): outcome unknown: the bank did not answer`; empty for an explicit undo's answer.
 */
const stoppedOnNote = (
  steps: ReadonlyArray<{ readonly stepId: string; readonly toolName: string; readonly reason: string }>
): string =>
  steps.length === 0
    ? ""
    : `stopped on ${steps.map((step) => `${step.toolName} (${step.stepId}): ${step.reason}`).join("; ")}`

/**
 * What an explicit undo's run (`Saga.compensateEffect`) came to, as its last entry says: `undo
 * failed: the card provider is down`; empty for any other saga's entry.
 */
const explicitNote = (payload: object | null): string =>
  payload !== null && "outcome" in payload
    ? `undo ${payload.outcome}${"detail" in payload && typeof payload.detail === "string" ? `: ${undoDetailSaid(String(payload.outcome), payload.detail)}` : ""}`
    : ""

/**
 * What a compensation report says may still be live, each step with its outcome and detail in full:
 * `may still be live: unavailable chargeCard (chargeCard:…#1): tool chargeCard is not registered in
 * this process`. An undo `unavailable` journals nothing of its own: only here does the timeline name it.
 */
const dirtyNote = (report: CompensationReport.CompensationReport): string => {
  const dirty = CompensationReport.dirty(report).map((step) => {
    const outcome = "outcome" in step ? step.outcome : "not undone: outcome unknown"
    return `${outcome} ${step.toolName} (${step.stepId})${step.detail ? `: ${step.detail}` : ""}`
  })
  return dirty.length === 0 ? "" : `may still be live: ${dirty.join("; ")}`
}

/** What a call or an undo was granted (the `capabilities` of its `INTENT` or `COMPENSATING`): `granted network, env:API_HOST`. */
const grantedNote = (capabilities: ReadonlyArray<string> | undefined): string =>
  capabilities === undefined || capabilities.length === 0 ? "" : `granted ${capabilities.join(", ")}`

/** The notes that say something, one after the other. */
const joined = (...notes: ReadonlyArray<string>): string => notes.filter((note) => note !== "").join("; ")

/** What an entry whose payload decoded says, by phase; `ran`: where its call ran, when known. */
const detailOfRecorded = (entry: Recorded, ran: RanWhere = undefined): string => {
  switch (entry.phase) {
    case "EXECUTED": {
      const result = `result ${JSON.stringify(entry.payload.result)}`
      const { resolvedBy } = entry.payload
      return resolvedBy === undefined ? result : `${result}; resolved as applied by ${resolvedBy}`
    }
    case "AWAITING_APPROVAL": {
      const digest = `input sha256 ${entry.payload.inputDigest.slice(0, 12)}…`
      if (entry.payload.deferred !== true) return digest
      return ran === "made"
        ? `${digest} (approved on the spot: the call ran where the program made it)`
        : ran === "settled"
          ? `${digest} (deferred: the program went on)`
          : `${digest} (asked without halting: the program goes on while it is pending)`
    }
    case "INTENT": {
      const how =
        entry.payload?.deferred === true
          ? "deferred call, run once approved"
          : ran === "made"
            ? "ran where the program made it: approved on the spot"
            : ""
      return joined(how, grantedNote(entry.payload?.capabilities))
    }
    case "COMPENSATING":
      return grantedNote(entry.payload?.capabilities)
    case "APPROVED":
      return entry.payload.renewedBy === undefined ? `by ${entry.payload.by}` : `renewed by ${entry.payload.renewedBy}`
    case "REJECTED":
    case "EXPIRED":
      return entry.payload.reason
    case "FAILED":
      return entry.payload.description
    case "COMPENSATED":
    case "COMPENSATION_FAILED":
    case "COMPENSATION_UNKNOWN":
    case "SKIPPED":
      return entry.payload?.reason ?? ""
    case "COMPENSATION_PARTIAL":
      return entry.payload?.remaining ?? ""
    case "SAGA_COMPENSATING":
      return entry.payload.notStarted === undefined
        ? entry.payload.cause
        : `${entry.payload.cause}; ${notStartedNote(entry)}`
    case "SAGA_COMPENSATION_FAILED":
      return "undone" in entry.payload ? dirtyNote(entry.payload) : explicitNote(entry.payload)
    case "SAGA_AWAITING_APPROVAL":
      return entry.payload.requestId
    case "SAGA_SUSPENDED":
      return notStartedNote(entry)
    case "SAGA_COMPLETED":
      return explicitNote(entry.payload) || notStartedNote(entry)
    case "SAGA_NEEDS_ATTENTION": {
      const stopped = "unknown" in entry.payload ? stoppedOnNote(entry.payload.unknown) : explicitNote(entry.payload)
      return joined(stopped, notStartedNote(entry))
    }
    default:
      return ""
  }
}

/**
 * The short detail of an entry: why it failed, who approved or renewed, what remains; on a
 * `SAGA_COMPENSATION_FAILED` report, every step that may still be live, with its outcome and
 * detail (`may still be live: unavailable chargeCard (…): tool chargeCard is not registered in this
 * process`). Never the receipt. A payload that does not fit its phase says so. The text is as journaled, control
 * characters included: `format` escapes them, and so must any other terminal display of it.
 *
 * @since 0.1.0
 * @category formatting
 */
export const detailOf = (entry: Entry): string =>
  Either.match(decodeEntry(entry), {
    onLeft: () => "payload does not decode",
    onRight: (recorded) => detailOfRecorded(recorded)
  })

/**
 * Where each call that asked for approval without halting ran, by step id: the first `INTENT`
 * after its deferred `AWAITING_APPROVAL` says so.
 */
const ranWhere = (recorded: ReadonlyArray<Recorded | undefined>): Map<string, RanWhere> => {
  const ran = new Map<string, RanWhere>()
  for (const entry of recorded) {
    if (entry?.stepId == null) continue
    if (entry.phase === "AWAITING_APPROVAL" && entry.payload.deferred === true) ran.set(entry.stepId, undefined)
    if (entry.phase === "INTENT" && ran.has(entry.stepId) && ran.get(entry.stepId) === undefined) {
      ran.set(entry.stepId, entry.payload?.deferred === true ? "settled" : "made")
    }
  }
  return ran
}

/**
 * The detail of each entry (see `detailOf`), read with the others: a call that asked for approval
 * without halting (an agent's) says what happened to it, which its `AWAITING_APPROVAL` cannot say
 * alone, since it is written before the decision is known. Approved on the spot
 * (`Approval.layerAutoApprove`), it ran where the program made it: `(approved on the spot: the call
 * ran where the program made it)`; approved later, it ran where the program settled it:
 * `(deferred: the program went on)`; still waiting: `(asked without halting: the program goes on
 * while it is pending)`.
 *
 * @since 0.4.0
 * @category formatting
 */
export const details = (entries: ReadonlyArray<Entry>): ReadonlyArray<string> => {
  const recorded = entries.map((entry) => Either.getOrUndefined(decodeEntry(entry)))
  const ran = ranWhere(recorded)
  return recorded.map((entry) =>
    entry === undefined
      ? "payload does not decode"
      : detailOfRecorded(entry, entry.stepId == null ? undefined : ran.get(entry.stepId))
  )
}

const recorded = (entry: Entry): Recorded | undefined =>
  Either.getOrUndefined(Either.map(decodeEntry(entry), (decoded): Recorded => decoded))

/**
 * Why each unknown step is unknown, by step id: the reason the saga journaled when it stopped on
 * the step (a timeout, a defect, `Outcome.unknown`'s words), as journaled (escape it for a terminal
 * or a page). A step with an outcome, one that did not start, and one the saga has not stopped on
 * yet (its worker died) have none. The same reading as `Saga.status`'s `unknownReason`.
 *
 * @since 0.4.0
 * @category reading
 */
export const unknownReasons = (entries: ReadonlyArray<Entry>): ReadonlyMap<string, string> => {
  // The run's own reading of the journal: what a resume, `Saga.status` and this say agree.
  const view = new JournalView(entries.flatMap((entry) => recorded(entry) ?? []))
  const reasons = new Map<string, string>()
  for (const step of view.steps.values()) {
    const reason = view.unknownReason(step.stepId)
    if (reason !== undefined) reasons.set(step.stepId, reason)
  }
  return reasons
}

/**
 * The steps whose last `INTENT` has no outcome because the run was interrupted with none of their
 * calls in flight (it never started, or every attempt failed and it was waiting to retry), as the
 * saga-level entry that ended that run journals (`notStarted`): they did not run, so they are not
 * unknown. A resume runs them.
 *
 * @since 0.5.0
 * @category reading
 */
export const notStartedSteps = (entries: ReadonlyArray<Entry>): ReadonlySet<string> => {
  const open = new Set<string>()
  const notStarted = new Set<string>()
  for (const entry of entries) {
    if (entry.stepId !== null) {
      if (entry.phase === "INTENT") open.add(entry.stepId)
      if (entry.phase === "INTENT" || entry.phase === "EXECUTED" || entry.phase === "FAILED") {
        notStarted.delete(entry.stepId)
      }
      if (entry.phase === "EXECUTED" || entry.phase === "FAILED") open.delete(entry.stepId)
      continue
    }
    const decoded = recorded(entry)
    for (const stepId of (decoded === undefined ? undefined : notStartedIn(decoded)) ?? []) {
      if (open.has(stepId)) notStarted.add(stepId)
    }
  }
  return notStarted
}

/**
 * Until when the approval of `stepId` holds, as journaled: the `expiresAt` of its last `APPROVED` (a
 * renewal's, once renewed), as written; `undefined` when it names none. NOTE: an expiry from the
 * tool's or the worker's `approvalTtl` is not journaled (it is applied when the saga runs), so it
 * cannot be read here.
 *
 * @since 0.5.0
 * @category reading
 */
export const approvedUntil = (entries: ReadonlyArray<Entry>, stepId: string): string | undefined => {
  const last = entries.filter((entry) => entry.stepId === stepId && entry.phase === "APPROVED").at(-1)
  const decoded = last === undefined ? undefined : recorded(last)
  return decoded?.phase === "APPROVED" ? decoded.payload.expiresAt : undefined
}

/**
 * The steps a resume of the saga's program cannot replay: the program's last run succeeded without
 * reaching them while their outcome was unknown (a changed program: a tool renamed, a step removed
 * or made conditional; its `SAGA_NEEDS_ATTENTION` journals them `unreached`), and they are executed
 * since (resolved as applied, `Saga.resolve`). That program, resumed, fails with `NonDeterminism`
 * at its end, writing nothing: compensate the saga instead (or resume it with a release that makes
 * their calls). What `effect-saga show`, `resolve`, the HTTP API and the console read to offer
 * compensation, not a resume. Empty for a journal that never journaled `unreached`.
 *
 * @since 0.5.0
 * @category reading
 */
export const notReplayable = (entries: ReadonlyArray<Entry>): ReadonlyArray<string> =>
  new JournalView(entries.flatMap((entry) => recorded(entry) ?? [])).notReplayable()

/**
 * The step whose journaled failure binds the saga to compensate, if any: the first `FAILED` not
 * journaled `taints: false` (the mark of a failure an agent's loop answers the model with), a
 * failure the program caught and a step resolved as not applied among them (see
 * docs/compensation.md). A resume of the saga then compensates it rather than go on: the replay
 * answers that failure. What `effect-saga show`, `resolve` and the console read to say which a
 * resume does.
 *
 * @since 0.5.0
 * @category reading
 */
export const failureToUndo = (entries: ReadonlyArray<Entry>): string | undefined => {
  for (const entry of entries) {
    if (entry.phase !== "FAILED" || entry.stepId === null) continue
    const decoded = recorded(entry)
    if (decoded?.phase === "FAILED" && decoded.payload.taints !== false) return entry.stepId
  }
  return undefined
}

/** Undo phases that mean an undo began or settled (`SKIPPED` undid nothing). */
const undoPhases: ReadonlySet<Entry["phase"]> = new Set([
  "COMPENSATING",
  "COMPENSATED",
  "COMPENSATION_PARTIAL",
  "COMPENSATION_FAILED",
  "COMPENSATION_UNKNOWN"
])

/**
 * The step that ran before `stepId` was last called and whose undo began, if any: resolving
 * `stepId` as applied is then refused (`Saga.resolve`, `CommandRefused`), since its undo would come
 * after that step's, out of reverse order; only not-applied is left. What `effect-saga show` and the
 * console read to offer only what is allowed.
 *
 * @since 0.4.0
 * @category reading
 */
export const undoneBefore = (entries: ReadonlyArray<Entry>, stepId: string): string | undefined => {
  const calledAt = Math.max(0, ...entries.filter((e) => e.stepId === stepId && e.phase === "INTENT").map((e) => e.seq))
  const ranBefore = new Set(entries.filter((e) => e.phase === "EXECUTED" && e.seq < calledAt).map((e) => e.stepId))
  return (
    entries.find((e) => e.stepId !== null && ranBefore.has(e.stepId) && undoPhases.has(e.phase))?.stepId ?? undefined
  )
}

/**
 * Formats entries as an aligned table, one line per entry. What a journaled value holds that a
 * terminal would act on (a newline, an escape sequence, a bidi override) is shown escaped (`\n`,
 * `\u001b`, `\u202e`), so no reason or name can break its line or forge another.
 *
 * @since 0.1.0
 * @category formatting
 */
export const format = (entries: ReadonlyArray<Entry>): string => {
  const shown = details(entries)
  const rows = entries.map((entry, index) => [
    String(entry.seq),
    entry.at.slice(11, 23),
    entry.stepId ?? "",
    entry.toolName ?? "",
    entry.phase,
    shown[index]!
  ])
  return table(["seq", "time", "step", "tool", "phase", "detail"], rows)
}

/** What is printed in place of a receipt: whether it is sealed and under which key, never its value. */
const placeholder = (receipt: JournaledReceipt): string =>
  typeof receipt === "string" ? "<redacted>" : `<sealed with ${receipt.kid}>`

/** What is printed in place of a payload that does not decode: it may hold anything, a receipt too. */
const undecodable = JSON.stringify("<the payload does not decode: not shown>")

/** The payload as its schema reads it (only the fields it knows), the receipt replaced. */
const printable = (entry: Recorded): string | null =>
  entry.phase === "EXECUTED" && entry.payload.receipt !== undefined
    ? encodePayload("EXECUTED", { ...entry.payload, receipt: placeholder(entry.payload.receipt) })
    : encodePayload(entry.phase, entry.payload)

/**
 * The entry with the receipt in its payload, if any, replaced by `<redacted>` or `<sealed with k1>`
 * (its hash is then no longer the payload's: verify and export work on the stored entry). A payload
 * is printed as its phase's schema reads it: a field it does not know is left out, and a payload
 * that does not decode is not printed at all.
 *
 * @since 0.2.0
 * @category redaction
 */
export const withoutReceipt = (entry: Entry): Entry =>
  Either.match(decodeEntry(entry), {
    onLeft: () => ({ ...entry, payload: undecodable }),
    onRight: (recorded) => ({ ...entry, payload: printable(recorded) })
  })
