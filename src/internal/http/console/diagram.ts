/**
 * A saga's journal drawn as a sequence diagram in SVG, on the server: the saga calls each tool and
 * the tool answers, an operator decides on approvals, the undos run back; saga-level entries are
 * notes on the saga's lifeline, failures are drawn red.
 */
import type { Entry } from "../../../Journal.js"
import * as Timeline from "../../../Timeline.js"
import { escape } from "./html.js"

/** One row of the diagram: an arrow between two participants, or a note over one. */
type Row =
  | {
      readonly _tag: "Arrow"
      readonly from: string
      readonly to: string
      readonly label: string
      readonly bad: boolean
    }
  | { readonly _tag: "Note"; readonly over: string; readonly label: string; readonly bad: boolean }

const SAGA = "saga"
const OPERATOR = "operator"
const operatorPhases: ReadonlySet<Entry["phase"]> = new Set(["AWAITING_APPROVAL", "APPROVED", "REJECTED", "EXPIRED"])
const badPhases: ReadonlySet<Entry["phase"]> = new Set([
  "FAILED",
  "REJECTED",
  "EXPIRED",
  "COMPENSATION_FAILED",
  "COMPENSATION_PARTIAL",
  "COMPENSATION_UNKNOWN",
  "SAGA_COMPENSATION_FAILED",
  "SAGA_NEEDS_ATTENTION"
])

const flat = (text: string): string => text.replace(/\s+/g, " ").trim()

const cut = (text: string, max: number): string => (text.length > max ? `${text.slice(0, max - 1)}…` : text)

/**
 * A label drawn in `max` characters (an arrow's, a note's, a participant's: the saga's id): cut
 * short, it keeps its whole text as the group's title (a tooltip, and text a reader of the page finds).
 */
const label = (text: string, max: number): { readonly title: string; readonly drawn: string } => {
  const whole = flat(text)
  const drawn = cut(whole, max)
  return { title: drawn === whole ? "" : `<title>${escape(whole)}</title>`, drawn: escape(drawn) }
}

const sagaNote = (entry: Entry): string => {
  const phase = entry.phase
    .replace(/^SAGA_/, "")
    .toLowerCase()
    .replaceAll("_", " ")
  const detail = entry.phase === "SAGA_COMPENSATING" ? Timeline.detailOf(entry) : ""
  return detail === "" ? phase : `${phase}: ${detail}`
}

const labelled = (what: string, detail: string): string => (detail === "" ? what : `${what}: ${detail}`)

const rowOf = (entry: Entry): Row => {
  const bad = badPhases.has(entry.phase)
  if (entry.toolName === null) return { _tag: "Note", over: SAGA, label: sagaNote(entry), bad }
  const tool = entry.toolName
  const detail = Timeline.detailOf(entry)
  const arrow = (from: string, to: string, label: string): Row => ({ _tag: "Arrow", from, to, label, bad })
  switch (entry.phase) {
    case "INTENT":
      return arrow(SAGA, tool, labelled("call", entry.input ?? ""))
    case "EXECUTED":
      return arrow(tool, SAGA, labelled("executed", detail))
    case "FAILED":
      return arrow(tool, SAGA, labelled("failed", detail))
    case "AWAITING_APPROVAL":
      return arrow(SAGA, OPERATOR, `approve ${tool}?`)
    case "APPROVED":
      return arrow(OPERATOR, SAGA, labelled("approved", detail))
    case "REJECTED":
      return arrow(OPERATOR, SAGA, labelled("rejected", detail))
    case "EXPIRED":
      return { _tag: "Note", over: OPERATOR, label: labelled("approval expired", detail), bad }
    case "COMPENSATING":
      return arrow(SAGA, tool, "undo")
    case "COMPENSATED":
      return arrow(tool, SAGA, "undo completed")
    case "SKIPPED":
      return { _tag: "Note", over: tool, label: labelled("undo skipped", detail), bad }
    default:
      return arrow(tool, SAGA, labelled(entry.phase.toLowerCase().replaceAll("_", " "), detail))
  }
}

const COLUMN = 190
const ROW = 30
const TOP = 56

/**
 * The diagram of `entries` (in `seq` order) as an SVG element, participants in the order they
 * first appear; `brokenAt`, when the journal does not verify, ends it with a red line at that seq.
 *
 * @since 0.2.0
 * @category drawing
 */
export const svg = (sagaId: string, entries: ReadonlyArray<Entry>, brokenAt?: number | null): string => {
  const shown = brokenAt === undefined || brokenAt === null ? entries : entries.filter((entry) => entry.seq < brokenAt)
  const participants = [SAGA]
  for (const entry of shown) {
    const name = entry.toolName
    if (name !== null && !operatorPhases.has(entry.phase) && !participants.includes(name)) participants.push(name)
  }
  if (shown.some((entry) => operatorPhases.has(entry.phase))) participants.push(OPERATOR)
  const x = (name: string) => 20 + COLUMN / 2 + participants.indexOf(name) * COLUMN
  const rows = shown.map(rowOf)
  const height = TOP + (rows.length + (brokenAt === undefined || brokenAt === null ? 1 : 2)) * ROW
  const width = 40 + participants.length * COLUMN
  const heads = participants.map((name) => {
    const { title, drawn } = label(name === SAGA ? `saga ${sagaId}` : name, 24)
    return `<g>${title}<rect x="${x(name) - COLUMN / 2 + 10}" y="10" width="${COLUMN - 20}" height="28" rx="5" fill="#eef2f8" stroke="#8a94a6"/><text x="${x(name)}" y="29" text-anchor="middle" font-weight="600">${drawn}</text><line x1="${x(name)}" y1="38" x2="${x(name)}" y2="${height - 6}" stroke="#b8c0cc" stroke-dasharray="4 4"/></g>`
  })
  const drawn = rows.map((row, index) => {
    const y = TOP + index * ROW + ROW / 2
    const color = row.bad ? "#b3261e" : "#1d2330"
    if (row._tag === "Note") {
      const { title, drawn } = label(row.label, 26)
      return `<g>${title}<rect x="${x(row.over) - 80}" y="${y - 11}" width="160" height="20" rx="3" fill="${row.bad ? "#fdecea" : "#fff8d6"}" stroke="${row.bad ? "#b3261e" : "#d9c56b"}"/><text x="${x(row.over)}" y="${y + 4}" text-anchor="middle" fill="${color}">${drawn}</text></g>`
    }
    const from = x(row.from)
    const to = x(row.to)
    const tip = to > from ? to - 6 : to + 6
    const head =
      to > from
        ? `${tip - 8},${y + 9} ${tip},${y + 5} ${tip - 8},${y + 1}`
        : `${tip + 8},${y + 9} ${tip},${y + 5} ${tip + 8},${y + 1}`
    const { title, drawn } = label(row.label, Math.max(16, Math.floor((Math.abs(to - from) / COLUMN) * 30)))
    return `<g>${title}<line x1="${from}" y1="${y + 5}" x2="${tip}" y2="${y + 5}" stroke="${color}" stroke-width="1.5"${row.to === SAGA ? ' stroke-dasharray="5 3"' : ""}/><polygon points="${head}" fill="${color}"/><text x="${(from + to) / 2}" y="${y}" text-anchor="middle" fill="${color}">${drawn}</text></g>`
  })
  const broken =
    brokenAt === undefined || brokenAt === null
      ? ""
      : `<text x="20" y="${TOP + rows.length * ROW + ROW}" fill="#b3261e" font-weight="700">the journal does not verify from seq ${brokenAt}: nothing past it is drawn</text>`
  return `<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="Sequence diagram of saga ${escape(sagaId)}" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, sans-serif" font-size="12"><title>Timeline of saga ${escape(sagaId)}</title>${heads.join("")}${drawn.join("")}${broken}</svg>`
}
