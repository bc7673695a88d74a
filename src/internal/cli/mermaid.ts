/**
 * A saga's journal as a Mermaid sequence diagram: the saga calls each tool, the tools answer, an
 * operator decides on approvals, and the undos run back; every outcome is on an arrow or a note.
 *
 * @since 0.1.0
 */
import type { Entry } from "../../Journal.js"
import * as Timeline from "../../Timeline.js"
import { printable } from "../util/printable.js"

const entities: Record<string, string> = { "#": "#35;", ";": "#59;", "<": "#lt;", ">": "#gt;" }

/**
 * Text Mermaid prints as it is: control characters escaped (`printable`), no line breaks, `# ; < >`
 * as entity codes, not too long (`max`: 80, or `LONG` for a note that carries a reason or a lease).
 */
const text = (value: string, max = 80): string => {
  const flat = printable(value).replace(/\s+/g, " ").trim()
  const short = flat.length > max ? `${flat.slice(0, max - 1)}…` : flat
  return short.replace(/[#;<>]/g, (char) => entities[char]!)
}

/** How long a note that says why a step's outcome is unknown, or how the lease stands, may be. */
const LONG = 160

const sagaPhases: Partial<Record<Entry["phase"], string>> = {
  SAGA_STARTED: "started",
  SAGA_RESUMED: "resumed",
  SAGA_COMPLETED: "completed",
  SAGA_COMPENSATING: "compensating",
  SAGA_COMPENSATED: "compensated",
  SAGA_COMPENSATION_FAILED: "compensation failed: something may still be live",
  SAGA_AWAITING_APPROVAL: "awaiting approval",
  SAGA_NEEDS_ATTENTION: "needs attention: a step's outcome is unknown",
  SAGA_SUSPENDED: "suspended"
}

/** The note on a saga-level entry: its phase in words, and why where the journal says. */
const sagaNote = (entry: Entry): string => {
  const phase = sagaPhases[entry.phase] ?? entry.phase
  const detail = entry.phase === "SAGA_COMPENSATING" ? Timeline.detailOf(entry) : ""
  return detail === "" ? phase : `${phase}: ${detail}`
}

/** The phases between the saga and the operator: the tool takes no part in them. */
const operatorPhases: ReadonlySet<Entry["phase"]> = new Set(["AWAITING_APPROVAL", "APPROVED", "REJECTED", "EXPIRED"])

/**
 * The note on the `INTENT` of a step with no outcome: in flight (who runs it, until when) while a
 * live lease drives the saga; else unknown, and why, when the saga journaled it.
 */
const unknownNote = (tool: string, reason: string | undefined, inFlight: string | undefined): string =>
  inFlight !== undefined
    ? `Note over ${tool}: ${text(`in flight (no outcome journaled yet): ${inFlight}`, LONG)}`
    : reason === undefined
      ? `Note over ${tool}: outcome unknown (no outcome journaled)`
      : `Note over ${tool}: ${text(`outcome unknown (no outcome journaled): ${reason}`, LONG)}`

/**
 * The lines of one step entry, between the saga `S`, the tool `tool` and the operator `O`;
 * `unknown` is set (to why, or `null` when the journal does not say) on an `INTENT` with no outcome.
 */
const stepLines = (
  entry: Entry,
  tool: string,
  unknown: string | null | undefined,
  inFlight: string | undefined
): ReadonlyArray<string> => {
  const detail = Timeline.detailOf(entry)
  const with_ = (what: string) => text(detail === "" ? what : `${what}: ${detail}`)
  switch (entry.phase) {
    case "INTENT":
      return [
        `S->>${tool}: ${text(entry.input ?? "call")}`,
        ...(unknown === undefined ? [] : [unknownNote(tool, unknown ?? undefined, inFlight)])
      ]
    case "EXECUTED":
      return [`${tool}-->>S: ${with_("executed")}`]
    case "FAILED":
      return [`${tool}--xS: ${text(detail === "" ? "failed" : detail)}`]
    case "AWAITING_APPROVAL":
      return [`S->>O: approve ${text(entry.toolName ?? "")} ${text(entry.input ?? "")}?`]
    case "APPROVED":
      return [`O-->>S: ${text(detail.startsWith("renewed") ? `approval ${detail}` : `approved ${detail}`)}`]
    case "REJECTED":
      return [`O--xS: ${text(detail === "" ? "rejected" : detail)}`]
    case "EXPIRED":
      return [`Note over S,O: ${text(detail === "" ? "the approval expired" : detail)}`]
    case "COMPENSATING":
      return [`S->>${tool}: undo`]
    case "COMPENSATED":
      return [`${tool}-->>S: undo completed`]
    case "COMPENSATION_PARTIAL":
      return [`${tool}--xS: ${with_("undo partial")}`]
    case "COMPENSATION_FAILED":
      return [`${tool}--xS: ${with_("undo failed")}`]
    case "COMPENSATION_UNKNOWN":
      return [`${tool}--xS: ${with_("undo outcome unknown")}`]
    case "SKIPPED":
      return [`Note over ${tool}: ${with_("undo skipped")}`]
    default:
      return [`Note over ${tool}: ${text(entry.phase)}`]
  }
}

/**
 * The last `INTENT` of each step that has no outcome after it, unless a saga-level entry after it
 * journals that the step was interrupted before it started (`notStarted`: it did not run).
 */
const unknownIntents = (entries: ReadonlyArray<Entry>): ReadonlySet<Entry> => {
  const lastIntent = new Map<string, Entry>()
  const settled = new Set<string>()
  for (const entry of entries) {
    if (entry.stepId === null) continue
    if (entry.phase === "INTENT") lastIntent.set(entry.stepId, entry)
    if (entry.phase === "EXECUTED" || entry.phase === "FAILED") settled.add(entry.stepId)
  }
  const notStarted = Timeline.notStartedSteps(entries)
  return new Set(
    Array.from(lastIntent).flatMap(([stepId, entry]) => (settled.has(stepId) || notStarted.has(stepId) ? [] : [entry]))
  )
}

/**
 * The diagram of a saga's entries (`seq` order): participants in the order they first appear; why
 * a step's outcome is unknown (`Timeline.unknownReasons`) on its note, or, when `inFlight` is given
 * (a live lease drives the running saga: `Lease.inFlight`), that the step is in flight, who runs it;
 * and `lease`, when given (one that lapsed, or none on a saga no worker drives: `Lease.notice`), as
 * the last note.
 *
 * @since 0.1.0
 * @category formatting
 */
export const diagram = (
  sagaId: string,
  entries: ReadonlyArray<Entry>,
  options: { readonly lease?: string | undefined; readonly inFlight?: string | undefined } = {}
): string => {
  const tools = new Map<string, string>()
  for (const entry of entries) {
    const called = entry.toolName !== null && !operatorPhases.has(entry.phase)
    if (called && !tools.has(entry.toolName!)) tools.set(entry.toolName!, `T${tools.size + 1}`)
  }
  const asksOperator = entries.some((entry) => operatorPhases.has(entry.phase))
  const unknown = unknownIntents(entries)
  const reasons = Timeline.unknownReasons(entries)
  const lines = [
    "sequenceDiagram",
    `  participant S as saga ${text(sagaId)}`,
    ...Array.from(tools, ([name, alias]) => `  participant ${alias} as ${text(name)}`),
    ...(asksOperator ? ["  actor O as operator"] : [])
  ]
  for (const entry of entries) {
    const body =
      entry.toolName === null
        ? [`Note over S: ${text(sagaNote(entry))}`]
        : stepLines(
            entry,
            tools.get(entry.toolName) ?? "S",
            unknown.has(entry) ? (reasons.get(entry.stepId!) ?? null) : undefined,
            options.inFlight
          )
    lines.push(...body.map((line) => `  ${line}`))
  }
  if (options.lease !== undefined) lines.push(`  Note over S: ${text(`lease ${options.lease}`, LONG)}`)
  return lines.join("\n")
}
