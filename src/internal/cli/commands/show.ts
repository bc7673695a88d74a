/**
 * `effect-saga show SAGA [--format table|mermaid] [--json]`: a saga's status, steps and journal.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Approval from "../../../Approval.js"
import type { Entry } from "../../../Journal.js"
import * as Journal from "../../../Journal.js"
import * as Saga from "../../../Saga.js"
import * as Timeline from "../../../Timeline.js"
import * as ApprovalExpiry from "../../util/approvalExpiry.js"
import { rejectTakes, unfinishedDecision } from "../../util/approvalRecord.js"
import { asOf, reaches } from "../../util/asOf.js"
import * as CompensationLeft from "../../util/compensationLeft.js"
import * as ExplicitUndoRuns from "../../util/explicitUndoRuns.js"
import { RUN_SUFFIX } from "../../util/identifier.js"
import * as Lease from "../../util/lease.js"
import * as Journaled from "../../util/origin.js"
import { printable } from "../../util/printable.js"
import { shellWord } from "../../util/shellWord.js"
import * as Stuck from "../../util/stuck.js"
import { table } from "../../util/table.js"
import * as ToResolve from "../../util/toResolve.js"
import { undoNeeded } from "../../util/undoNeeded.js"
import * as DecisionNext from "../decisionNext.js"
import { exitIfDirty } from "../dirty.js"
import * as DoubtedNext from "../doubtedNext.js"
import { SomethingWrong, UsageError } from "../failure.js"
import * as LeaseClock from "../leaseClock.js"
import * as Mermaid from "../mermaid.js"
import { print, printJson } from "../output.js"
import { withoutReceipt } from "../redact.js"
import * as Resumer from "../resumer.js"
import { db, json, saga, withStore } from "../root.js"
import { cellValue, jsonValue } from "../storedColumns.js"
import * as Trust from "../trust.js"
import * as UndoRunNext from "../undoRunNext.js"

const format = Options.choice("format", ["table", "mermaid"]).pipe(
  Options.withDescription("table: status, steps and the journal as a timeline; mermaid: a sequence diagram."),
  Options.withDefault("table" as const)
)

const header = (status: Saga.SagaStatus, now: number): ReadonlyArray<string> => [
  `saga ${status.sagaId}: ${status.status}`,
  `revision ${status.revision}  digest ${status.digest}`,
  `created ${status.createdAt}  updated ${status.updatedAt}`,
  `lease ${Lease.describe(status, now)}${Lease.isUndriven(status, now) ? ` (last written ${status.updatedAt})` : ""}`
]

/**
 * A step's state: one with no outcome while a live lease drives its running saga is in flight
 * (`Saga.status` says so); a read's unknown outcome says it is one: nothing to resolve. An approved
 * step of a saga that began to compensate never runs: its state says so.
 */
const stateOf = (step: Saga.StepStatus, status: Saga.SagaStatus): string =>
  step.state === "in_flight"
    ? "in flight"
    : step.state === "unknown" && step.changesNothing === true
      ? "unknown (a read)"
      : step.state === "approved" && compensating.has(status.status)
        ? "approved, never run (the saga began to compensate)"
        : step.state

const compensating: ReadonlySet<Saga.SagaStatus["status"]> = new Set([
  "compensating",
  "compensated",
  "compensation_failed"
])

/** The steps with no outcome journaled that may have changed something: what an operator resolves. */
const toResolve = (status: Saga.SagaStatus): ReadonlyArray<Saga.StepStatus> => ToResolve.toResolve(status.steps)

const steps = (status: Saga.SagaStatus): string =>
  table(
    ["step", "tool", "state", "undo"],
    status.steps.map((step) => [step.stepId, step.toolName, stateOf(step, status), step.undo ?? ""])
  )

/**
 * An `APPROVED` entry's detail, with until when the approval holds when it names its expiry: the
 * entry's own (the last `APPROVED` of its step up to it).
 */
const withExpiry = (entry: Entry, detail: string): string => {
  const until = entry.stepId === null ? undefined : Timeline.approvedUntil([entry], entry.stepId)
  return until === undefined ? detail : `${detail} (valid until ${until})`
}

/** What the outcome column reads of the saga, each built once: the steps by id and each step's last `INTENT`. */
interface Outcomes {
  readonly status: Saga.SagaStatus
  readonly steps: ReadonlyMap<string, Saga.StepStatus>
  readonly lastIntent: ReadonlyMap<string | null, number>
  /** An `INTENT` with no outcome journaled after it, by seq: the seq of the `INTENT` that ran its step again. */
  readonly rerunAt: ReadonlyMap<number, number>
  readonly reasons: ReadonlyMap<string, string>
  readonly now: number
}

const outcomesOf = (status: Saga.SagaStatus, entries: ReadonlyArray<Entry>, now: number): Outcomes => {
  const steps = new Map<string, Saga.StepStatus>()
  for (const step of status.steps) if (!steps.has(step.stepId)) steps.set(step.stepId, step)
  const lastIntent = new Map<string | null, number>()
  const rerunAt = new Map<number, number>()
  // Each step's INTENT with no outcome journaled after it yet.
  const open = new Map<string | null, number>()
  for (const entry of entries) {
    if (entry.phase === "INTENT") {
      lastIntent.set(entry.stepId, Math.max(entry.seq, lastIntent.get(entry.stepId) ?? -1))
      const earlier = open.get(entry.stepId)
      if (earlier !== undefined) rerunAt.set(earlier, entry.seq)
      open.set(entry.stepId, entry.seq)
    }
    if (entry.phase === "EXECUTED" || entry.phase === "FAILED") open.delete(entry.stepId)
  }
  return { status, steps, lastIntent, rerunAt, reasons: Timeline.unknownReasons(entries), now }
}

/**
 * The outcome column: what the entry says happened (never the receipt), or that nothing did, and
 * why, when the saga journaled it (`SAGA_NEEDS_ATTENTION`); until when an approval holds.
 */
const outcomeOf = (entry: Entry, detail: string, saga: Outcomes): string => {
  if (entry.phase === "APPROVED") return withExpiry(entry, detail)
  if (entry.phase !== "INTENT") return detail
  // What the INTENT says (how the call ran, what it was granted), then whether an outcome followed.
  return [detail, noOutcomeOf(entry, saga)].filter(Boolean).join("; ")
}

/** Of an `INTENT` no outcome followed, that none did, and why; "" for one an outcome followed. */
const noOutcomeOf = (entry: Entry, saga: Outcomes): string => {
  const step = entry.stepId === null ? undefined : saga.steps.get(entry.stepId)
  const rerun = saga.rerunAt.get(entry.seq)
  if (rerun !== undefined) return `no outcome journaled: run again at seq ${rerun}`
  const later = (saga.lastIntent.get(entry.stepId) ?? -1) > entry.seq
  if (later) return ""
  if (step?.state === "not_started") return "no outcome journaled: interrupted before it started (it did not run)"
  if (step?.state === "in_flight") {
    const inFlight = inFlightOf(saga.status, saga.now)
    return `no outcome journaled yet: in flight${inFlight === undefined ? "" : ` (${inFlight})`}`
  }
  if (step?.state !== "unknown") return ""
  if (step.changesNothing === true) return "no outcome journaled: unknown (a read: it changed nothing)"
  const reason = saga.reasons.get(step.stepId)
  return reason === undefined ? "no outcome journaled: unknown" : `no outcome journaled: unknown (${reason})`
}

const timeline = (entries: ReadonlyArray<Entry>, outcome: (entry: Entry, index: number) => string): string =>
  table(
    ["seq", "time", "step", "tool", "phase", "outcome"],
    entries.map((entry, index) => [
      String(entry.seq),
      entry.at,
      entry.stepId ?? "",
      entry.toolName ?? "",
      entry.phase,
      outcome(entry, index)
    ])
  )

/** Who runs a step with no outcome journaled, while a live lease drives the running saga (`Lease.isInFlight`). */
const inFlightOf = (status: Saga.SagaStatus, now: number): string | undefined => {
  const lease = Lease.liveLease(status, now)
  return lease !== undefined && Lease.isInFlight(status, now) ? Lease.inFlight(lease) : undefined
}

/**
 * The next line for a step with no outcome journaled while a live lease holds the saga: resolving
 * it is refused then (`LeaseHeld`). A running saga's step is in flight: its worker journals the
 * outcome when the call answers.
 */
const waitLine = (status: Saga.SagaStatus, stepId: string, lease: NonNullable<Saga.SagaStatus["lease"]>): string =>
  status.status === "running"
    ? `next: wait: ${stepId} is ${Lease.inFlight(lease)}; its worker journals the outcome when the call answers. Only if that lease lapses with no outcome journaled is it unknown, to resolve (effect-saga show ${shellWord(status.sagaId)} then says how)`
    : `next: wait: ${lease.owner} holds the saga's lease until ${lease.expiresAt} (resolving ${stepId} is refused while it does); once it is dropped or lapsed, effect-saga show ${shellWord(status.sagaId)} says how to resolve it`

/**
 * The next line of a saga a live lease holds when nothing else is to be done (not one `running`,
 * which its worker drives, nor `suspended`): its worker compensates it, runs its explicit undo (a run `running`), or
 * runs a command or an explicit undo on it; if that worker died (a CLI killed mid-way), nothing can
 * go on until the lease lapses.
 */
const heldLine = (status: Saga.SagaStatus, lease: NonNullable<Saga.SagaStatus["lease"]>): string => {
  const holds = `next: wait: ${lease.owner} holds the ${status.sagaId.endsWith(RUN_SUFFIX) ? "run" : "saga"}'s lease until ${lease.expiresAt}`
  const why =
    status.status === "compensating"
      ? "while it compensates (compensate and resolve are refused while it does)"
      : status.status === "running" && status.sagaId.endsWith(RUN_SUFFIX)
        ? "while its undo runs (asking for it again, and the saga's own compensation, wait or are refused while it does)"
        : status.status === "awaiting_approval"
          ? "(a command, or an explicit undo of one of its steps, runs on it: the commands below are refused with LeaseHeld while it does)"
          : status.status === "running" && status.steps.some((step) => step.state === "awaiting_approval")
            ? "while its program goes on (calls still in flight in concurrent branches, or an agent's call that asked for approval without halting): the approve and reject below are refused with LeaseHeld until the run halts awaiting approval (an agent's, before the model's final answer)"
            : "(a command, or an explicit undo of one of its steps, runs on it: compensate and resolve are refused while it does)"
  return `${holds} ${why}; if that worker died, the lease lapses then, and effect-saga show ${shellWord(status.sagaId)} says how to go on`
}

/** The next line for a step in flight: wait (its lease may have lapsed since `Saga.status` read it: read again). */
const inFlightLine = (status: Saga.SagaStatus, stepId: string, now: number): string => {
  const lease = Lease.liveLease(status, now)
  return lease !== undefined
    ? waitLine(status, stepId, lease)
    : `next: ${stepId} was in flight when the saga was read, and its lease has lapsed since: effect-saga show ${shellWord(status.sagaId)} again says whether it is unknown, and how to resolve it`
}

/** How `resolve` is given a receipt. */
const RECEIPT_FLAGS = "add --receipt - to read it from stdin, or --receipt env:NAME"

/**
 * The next line for a step with no outcome journaled: resolve it (or, for a tool that retries by
 * key, resume the saga, which runs it again), or wait while a worker drives the saga.
 */
const resolveLine = (
  status: Saga.SagaStatus,
  { receiptRequired, retriesByKey, stepId }: Saga.StepStatus,
  at: string,
  entries: ReadonlyArray<Entry>,
  reasons: ReadonlyMap<string, string>,
  now: number,
  origin: Journaled.Origin | undefined,
  unknown: ReadonlyArray<Saga.StepStatus>
): string => {
  const lease = Lease.liveLease(status, now)
  if (lease !== undefined) return waitLine(status, stepId, lease)
  const earlier = Timeline.undoneBefore(entries, stepId)
  const resolve = ToResolve.resolveCommand(status.sagaId, stepId, at, earlier)
  const command = ToResolve.resumeSettles(retriesByKey, reasons.get(stepId))
    ? `next: ${ToResolve.resumeRetries(stepId)}: ${ToResolve.resumeWhen(ToResolve.unsettledBesides(stepId, unknown, reasons))}, by ${Resumer.resumedBy(status.sagaId, origin)}; or, once you know its outcome, ${resolve}`
    : `next: ${resolve}`
  const said =
    earlier === undefined
      ? command
      : `${command} (if the call happened, undo it by hand first, then --applied --undone: step ${earlier} before it is undone already, so its undo cannot run in order)`
  const receipt = receiptRequired === true ? `; ${ToResolve.receiptNeeded(RECEIPT_FLAGS)}` : ""
  return `${said}${receipt}; ${ToResolve.beforeNotApplied(status.sagaId, stepId, reasons.get(stepId))}`
}

/**
 * The next line for an approved step: it runs when the saga is resumed, before its approval's
 * journaled expiry if it names one; once that passed (by this host's clock), a resume journals
 * `EXPIRED` and compensates unless the approval is renewed. An explicit undo's run is never resumed:
 * its undo runs when compensate-effect is asked again.
 */
const approvedLine = (
  status: Saga.SagaStatus,
  step: Saga.StepStatus,
  entries: ReadonlyArray<Entry>,
  origin: Journaled.Origin | undefined,
  at: string,
  now: number,
  undone: Saga.SagaStatus | undefined
): string => {
  const { stepId } = step
  const standing = ApprovalExpiry.standing(Timeline.approvedUntil(entries, stepId), now)
  // Nothing resumes an explicit undo's run: it goes on when compensate-effect is asked again.
  if (origin?._tag === "Effect") return UndoRunNext.approved(status, step, standing, at, undone)
  switch (standing._tag) {
    case "Open":
      return Resumer.approved(status.sagaId, stepId, origin)
    case "Holds":
      return Resumer.approved(status.sagaId, stepId, origin, standing.until)
    case "Lapsed":
      return Resumer.approvalLapsed(status.sagaId, stepId, origin, standing, at)
  }
}

/**
 * A saga that needs attention with nothing left to resolve (an operator resolved every step it
 * stopped on, or what is unknown is a read, which a resume runs again) and nobody driving it: it
 * waits to be resumed.
 */
const isResolved = (
  status: Saga.SagaStatus,
  unknown: ReadonlyArray<Saga.StepStatus>,
  undoRun: boolean,
  now: number
): boolean =>
  status.status === "needs_attention" && !undoRun && unknown.length === 0 && Lease.liveLease(status, now) === undefined

/**
 * What ends a saga whose undos left something live, once it is undone by hand: its resolution, then
 * a compensation again. `several`: other undos are named too (another line), so no command can name
 * the position each will be resolved at.
 */
const onceUndone = (sagaId: string, steps: ReadonlyArray<CompensationLeft.ByHand>, at: string, several: boolean) =>
  `effect-saga does not run a settled undo again: once the effect is undone, say so (${CompensationLeft.resolveUndone(sagaId, steps, at, several)}), then compensate the saga again, which ends it compensated once nothing else is dirty`

/**
 * The next lines of a compensation that failed, once nobody drives the saga (`CompensationLeft`
 * decides, as it does for the console): a compensation again runs the undos it could not and
 * journals a new report; what an undo left live is undone by hand; with nothing left dirty, a
 * compensation again ends the saga `compensated`.
 */
const compensationFailedLines = (status: Saga.SagaStatus, at: string, now: number): ReadonlyArray<string> => {
  const left = CompensationLeft.of(status, status.steps, now)
  if (left === undefined) return []
  const compensate = `effect-saga compensate ${shellWord(status.sagaId)} --register MODULE --as WHO ${at}`
  const several = left.byHand.length + left.toAsk.length > 1
  const lines: Array<string> = []
  if (left.undoable.length > 0) {
    lines.push(
      `next: ${compensate}, from a process that has their tools registered (and the receipt keys, if their receipts are sealed): it runs the undo of ${left.undoable.join(", ")} and journals a new report`
    )
  }
  if (left.byHand.length > 0) {
    lines.push(
      `next: undo by hand, at the provider, what ${CompensationLeft.leftLive(status.sagaId, left.byHand)}; ${onceUndone(status.sagaId, left.byHand, at, several)}`
    )
  }
  if (left.toAsk.length > 0) {
    lines.push(
      `next: ask the provider ${CompensationLeft.mayBeLive(status.sagaId, left.toAsk)}; ${onceUndone(status.sagaId, left.toAsk, at, several)}`
    )
  }
  if (left.ofRuns.length > 0) {
    lines.push(`next: ${CompensationLeft.followRuns(status.sagaId, left.ofRuns)}: ${compensate}`)
  }
  if (left.clean) {
    lines.push(
      `next: nothing is left dirty since the last report: effect-saga compensate ${shellWord(status.sagaId)} --as WHO ${at} (no undo is left to run: no module to register) journals a new one, and the saga ends compensated`
    )
  }
  return lines
}

/**
 * The saga whose effect a failed explicit undo's run left live, as it stands now: its own
 * compensation is what may still undo the effect; or whose own undo a run that needs attention
 * answers with; or that may have settled the effect a run's undo awaits approval for (`undefined`
 * for any other saga, or if it cannot be read).
 */
const undoneSaga = (status: Saga.SagaStatus) => {
  const step = status.steps[0]
  const open =
    status.status === "compensation_failed" ||
    status.status === "needs_attention" ||
    status.status === "awaiting_approval"
  return status.sagaId.endsWith(RUN_SUFFIX) && open && step !== undefined
    ? Effect.map(Effect.option(Saga.status(UndoRunNext.sagaIdOf(step))), Option.getOrUndefined)
    : Effect.succeed(undefined)
}

/**
 * What the operator may do next, with the position they saw: leases judged at `now` (the store's
 * clock), approvals at `hostNow` (this host's, as the worker that resumes the saga judges them by its own);
 * `reasons`: why each unknown step is unknown, as the outcome column read them.
 */
const next = (
  status: Saga.SagaStatus,
  entries: ReadonlyArray<Entry>,
  reasons: ReadonlyMap<string, string>,
  now: number,
  hostNow: number,
  undone: Saga.SagaStatus | undefined
): ReadonlyArray<string> => {
  const at = `--revision ${status.revision} --digest ${status.digest}`
  const waiting = status.steps.filter((step) => step.state === "awaiting_approval")
  const approved = status.status === "awaiting_approval" ? status.steps.filter((step) => step.state === "approved") : []
  const unknown = toResolve(status)
  const inFlight = ToResolve.toWaitFor(status.steps)
  const origin = Journaled.originOf(entries)
  // The run of an explicit undo that answered unknown: its undo is resolved, as done or not.
  const undoRun = status.status === "needs_attention" && status.sagaId.endsWith(RUN_SUFFIX)
  const unknownUndos = undoRun ? status.steps.filter((step) => step.undo === "unknown") : []
  const lines = [
    ...waiting.flatMap((step) => DecisionNext.awaitingApproval(status, step, origin, at, undone)),
    ...approved.map((step) => approvedLine(status, step, entries, origin, at, hostNow, undone)),
    ...inFlight.map((step) => inFlightLine(status, step.stepId, now)),
    ...unknown.map((step) => resolveLine(status, step, at, entries, reasons, now, origin, unknown)),
    ...unknownUndos.map((step) => unknownUndoLine(status, step, entries, at, undone)),
    ...(Stuck.isLeftBehind(status, now)
      ? [
          Resumer.leftBehind(
            status.sagaId,
            origin,
            at,
            unknown.map((step) => step.stepId)
          )
        ]
      : []),
    ...(isResolved(status, unknown, undoRun, now)
      ? [Resumer.resolved(status.sagaId, origin, at, Timeline.failureToUndo(entries), Timeline.notReplayable(entries))]
      : []),
    ...(!status.sagaId.endsWith(RUN_SUFFIX)
      ? compensationFailedLines(status, at, now)
      : status.status === "compensation_failed"
        ? UndoRunNext.compensationFailed(status, undone)
        : [])
  ]
  const held = Lease.liveLease(status, now)
  // A running saga under its lease is driven as it should be (a suspended one, handed back): nothing to say,
  // but that a call it asked approval for without halting is decided once the run halts.
  const driven = (status.status === "running" && !status.sagaId.endsWith(RUN_SUFFIX)) || status.status === "suspended"
  if (held === undefined || (driven && waiting.length === 0)) return lines
  // A saga awaiting approval is held by a command (or one that died): its decisions wait for the lease.
  if (lines.length === 0 || waiting.length > 0 || status.status === "awaiting_approval") {
    return [heldLine(status, held), ...lines]
  }
  return lines
}

/**
 * The next line of an explicit undo's run whose undo answered unknown: ask the provider whether that
 * undo happened, then resolve it. The run's own undo has the run's id as its key; a run that
 * answered with the saga's own undo (it journaled no undo of its own) is resolved in the saga first.
 */
const unknownUndoLine = (
  status: Saga.SagaStatus,
  step: Saga.StepStatus,
  entries: ReadonlyArray<Entry>,
  at: string,
  saga: Saga.SagaStatus | undefined
): string => {
  const command = (way: string) =>
    `effect-saga resolve ${shellWord(status.sagaId)} ${shellWord(step.stepId)} ${way} --as WHO ${at}`
  if (entries.some((entry) => entry.stepId === step.stepId)) {
    return `next: ${command("--applied|--not-applied")} (ask the provider whether the undo, key ${status.sagaId}, happened)`
  }
  const sagaId = UndoRunNext.sagaIdOf(step)
  const own = saga?.steps.find((candidate) => candidate.stepId === step.stepId)?.undo
  const answers = `this run answers with the saga's own undo of ${step.stepId} (key ${sagaId}/${step.stepId}/undo)`
  if (own === "completed") return `next: ${answers}, which the saga says is undone now: ${command("--applied")}`
  if (own === "failed") return `next: ${answers}, which the saga says did not undo it: ${command("--not-applied")}`
  return `next: ${answers}, ${own ?? "unknown"}: resolve it in the saga first (effect-saga show ${shellWord(sagaId)} says how); then effect-saga show ${shellWord(status.sagaId)} says how to close this run`
}

/**
 * A line under the steps for each step an explicit undo was asked of: the saga's journal is only
 * read by it (the step stays `executed`), its run says what came of it.
 */
const explicitUndoLines = (
  status: Saga.SagaStatus,
  runs: ReadonlyArray<ExplicitUndoRuns.ExplicitUndoRun>
): ReadonlyArray<string> =>
  runs.map((run) => {
    const own = status.steps.find((step) => step.stepId === run.stepId)?.undo
    return `${run.stepId}: ${ExplicitUndoRuns.describe(run, own)}; its run: effect-saga show ${shellWord(run.runId)}`
  })

const render = (
  status: Saga.SagaStatus,
  entries: ReadonlyArray<Entry>,
  now: number,
  hostNow: number,
  undone: Saga.SagaStatus | undefined,
  runs: ReadonlyArray<ExplicitUndoRuns.ExplicitUndoRun>
): string => {
  const saga = outcomesOf(status, entries, now)
  const then = next(status, entries, saga.reasons, now, hostNow, undone)
  // Each entry's detail read with the others: what an approval asked without halting came to.
  const shown = Timeline.details(entries)
  return [
    ...header(status, now).map(printable),
    "",
    status.steps.length === 0 ? "no steps" : steps(status),
    ...explicitUndoLines(status, runs).map(printable),
    "",
    timeline(entries, (entry, index) => outcomeOf(entry, shown[index]!, saga)),
    ...(then.length === 0 ? [] : ["", ...then.map(printable)])
  ].join("\n")
}

/** Entries that do not all decode, as stored: their columns but the payload, which may hold a receipt. */
const storedTimeline = (stored: ReadonlyArray<Journal.StoredEntry>): string =>
  table(
    ["seq", "time", "step", "tool", "phase"],
    stored.map((entry) => [entry.seq, entry.at, entry.stepId, entry.toolName, entry.phase].map(cellValue))
  )

/** A stored entry for `--json`: its columns as stored (bytes in hex), its payload not shown. */
const storedJson = ({ payload, ...columns }: Journal.StoredEntry) => ({
  ...Object.fromEntries(Object.entries(columns).map(([column, value]) => [column, jsonValue(value)])),
  payload: payload === null ? null : NOT_SHOWN
})

const NOT_SHOWN = "<not shown: effect-saga export prints it as stored>"

/**
 * What a tampered saga's journal shows: its entries, or (when one no longer decodes) its entries
 * as stored, read again undecoded.
 */
const journalOf = (inspection: Trust.Inspection, tampered: Trust.Tampered) =>
  tampered.problem === "undecodable" && inspection.entries.length === 0
    ? Effect.map(Journal.storedEntries(inspection.sagaId), (stored) => ({
        text: stored.length === 0 ? "(no entry can be shown)" : storedTimeline(stored),
        json: stored.map(storedJson)
      }))
    : Effect.succeed({
        text:
          inspection.entries.length === 0 ? "(no entry can be shown)" : timeline(inspection.entries, Timeline.detailOf),
        json: inspection.entries.map(withoutReceipt)
      })

/**
 * A tampered saga: the break first, what effect-saga still does with it (`refusal`: nothing, when
 * its journal does not verify; for a request the approvals table holds otherwise than the journal,
 * `DoubtedNext`'s lines), then (as a table) the entries as stored, for the record; never its status
 * or steps, which the journal would decide.
 */
const renderTampered = (
  inspection: Trust.Inspection,
  tampered: Trust.Tampered,
  journal: string,
  refusal: ReadonlyArray<string>
) => [Trust.line(inspection.sagaId, tampered), ...refusal, "", journal].join("\n")

const REFUSED = ["effect-saga refuses to act on this saga. The journal as stored, not to be trusted:"]

const showTampered = (
  inspection: Trust.Inspection,
  tampered: Trust.Tampered,
  options: { readonly json: boolean; readonly format: "table" | "mermaid" },
  refusal: ReadonlyArray<string> = REFUSED
) =>
  Effect.zipRight(
    !options.json && options.format === "mermaid"
      ? print(Trust.line(inspection.sagaId, tampered))
      : Effect.flatMap(journalOf(inspection, tampered), (journal) =>
          options.json
            ? printJson({ tampered, saga: inspection.record ?? null, entries: journal.json })
            : print(renderTampered(inspection, tampered, journal.text, refusal))
        ),
    Effect.fail(new SomethingWrong({ reason: `saga ${inspection.sagaId} is tampered` }))
  )

/**
 * A request of this saga that the approvals table holds otherwise than the journal (judged as
 * `approvals` judges it), as a mark: `show` offers no decision on it, as `approve` would refuse it,
 * but the commands that still take it (`DoubtedNext`); for a row pending on a step the saga does
 * not wait on, that nothing acts on it, and how to remove it.
 */
const doubtedRequest = (status: Saga.SagaStatus, inspection: Trust.Inspection) =>
  Effect.gen(function* () {
    const marked = (yield* Approval.inboxOf(status.sagaId)).find((request) => request.tampered !== undefined)
    if (marked === undefined) return undefined
    const asked = inspection.entries.find(
      (entry) => entry.phase === "AWAITING_APPROVAL" && entry.stepId === marked.stepId
    )
    const mark = { seq: asked?.seq ?? null, problem: "approval", reason: marked.tampered! } satisfies Trust.Tampered
    const waits = status.steps.some((step) => step.stepId === marked.stepId && step.state === "awaiting_approval")
    if (!waits) return { mark, lines: DoubtedNext.strayLines(marked) }
    const journaled = Approval.journaledRequest(marked, inspection.entries)
    const unfinished =
      journaled.inputDigest === null
        ? undefined
        : yield* unfinishedDecision({ ...marked, inputDigest: journaled.inputDigest })
    const doubted = {
      sagaId: status.sagaId,
      stepId: marked.stepId,
      undos: status.steps.some(undoNeeded),
      origin: Journaled.originOf(inspection.entries)
    }
    return {
      mark,
      lines: DoubtedNext.doubtedLines(doubted, yield* rejectTakes(status.sagaId, marked.stepId), unfinished)
    }
  })

/**
 * The `show` command.
 *
 * @since 0.1.0
 * @category commands
 */
export const show = Command.make("show", { db, json, format, saga }, (options) =>
  Effect.gen(function* () {
    if (options.json && options.format === "mermaid") {
      return yield* new UsageError({ message: "--json and --format mermaid exclude each other: choose one" })
    }
    yield* withStore(
      options.db,
      Effect.gen(function* () {
        const inspection = yield* Trust.inspect(options.saga)
        const tampered = Trust.tamperedOf(inspection.verification)
        if (tampered !== null) return yield* showTampered(inspection, tampered, options)
        const status = yield* Saga.status(options.saga)
        const doubted = yield* doubtedRequest(status, inspection)
        if (doubted !== undefined) return yield* showTampered(inspection, doubted.mark, options, doubted.lines)
        // The row, its steps and the entries as one state: entries read before the row stop short of a
        // saga that moved on in between, and are read again.
        const entries = asOf(
          reaches(inspection.entries, status.revision)
            ? inspection.entries
            : (yield* Trust.inspect(options.saga)).entries,
          status.revision
        )
        // Leases by the store's clock (PostgreSQL's server's), approvals by this host's, as a worker judges each.
        const now = yield* LeaseClock.now
        const hostNow = yield* Clock.currentTimeMillis
        const runs = options.format === "mermaid" ? [] : yield* ExplicitUndoRuns.explicitUndoRuns(status)
        if (options.json) {
          const saga = ExplicitUndoRuns.withRuns(status, runs)
          yield* printJson({ tampered, saga, entries: entries.map(withoutReceipt) })
        } else if (options.format === "mermaid")
          yield* print(
            Mermaid.diagram(status.sagaId, entries, {
              lease: Lease.notice(status, now),
              inFlight: inFlightOf(status, now)
            })
          )
        else yield* print(render(status, entries, now, hostNow, yield* undoneSaga(status), runs))
        yield* exitIfDirty(
          [{ ...status, stuck: Stuck.isStuck(status, Journaled.originOf(entries), now) }],
          ExplicitUndoRuns.unverified(runs)
        )
      }),
      { access: "read" }
    )
  })
).pipe(
  Command.withDescription(
    "Show a saga: its status, revision and digest, its steps, and its journal (seq, time, step, tool, phase, outcome); never a receipt. A saga whose journal does not verify is shown as TAMPERED, the break first. Exits 1 if it is tampered, compensation_failed or needs_attention, or stuck (started with Saga.run, so that no Recovery can resume it, and running or compensating with no worker driving it, or suspended), or if the run of an explicit undo of one of its steps does not verify, or if the approvals table holds one of its requests otherwise than the journal."
  )
)
