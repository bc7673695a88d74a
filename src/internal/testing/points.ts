/**
 * The crash points of a saga, as many as its uncrashed run made journal writes and tool calls: which
 * to explore, how to say where one is, and whether a run repeated the uncrashed one up to its crash.
 */
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Random from "effect/Random"
import type * as Journal from "../../Journal.js"
import type { CrashKind } from "../../Testing.js"
import { DETERMINISM_HINT } from "./checks.js"
import type { CallSeen, CrashSwitch, Point } from "./crash.js"

const describeCall = (call: CallSeen) =>
  `${call.toolName} ${call.site === "execute" ? "call" : "undo"} of step ${call.stepId}`

const describeEntries = (entries: ReadonlyArray<Journal.Entry>) =>
  entries
    .map((entry) => `seq ${entry.seq} ${entry.phase}${entry.toolName === null ? "" : ` ${entry.toolName}`}`)
    .join(", ")

/** Input text as a message shows it: whole when short, else its beginning. */
const abridged = (input: string) => (input.length <= 120 ? input : `${input.slice(0, 120)}…`)

/**
 * An entry as a run that repeats another must write it again (its time and hash aside), input
 * included: a keyed step's id does not change with its input.
 */
const shapeOf = (entry: Journal.Entry, show: (input: string) => string = (input) => input) =>
  `seq ${entry.seq} ${entry.phase} ${entry.toolName ?? ""} ${entry.stepId ?? ""}${entry.input === null ? "" : ` input ${show(entry.input)}`}`

const shapesOf = (entries: ReadonlyArray<Journal.Entry>, show?: (input: string) => string) =>
  entries.map((entry) => shapeOf(entry, show)).join(", ")

/** What a tool answered, as an entry journals it: an outcome's payload without its receipt (sealed anew each time). */
const answerOf = (entry: Journal.Entry): string | undefined => {
  if ((entry.phase !== "EXECUTED" && entry.phase !== "FAILED") || entry.payload === null) return undefined
  const payload: unknown = JSON.parse(entry.payload)
  if (typeof payload !== "object" || payload === null) return entry.payload
  const { receipt: _receipt, ...answer } = payload as Record<string, unknown>
  return JSON.stringify(answer)
}

/** Whether a tool answered otherwise in one write than in the other (a world that issues random ids). */
const answeredOtherwise = (entries: ReadonlyArray<Journal.Entry>, expected: ReadonlyArray<Journal.Entry>) =>
  entries.some((entry, i) => answerOf(entry) !== answerOf(expected[i]!))

/**
 * Where the run that was to crash first wrote something else than the uncrashed run, if it did. Once
 * a tool answered otherwise than in the uncrashed run (its world is built anew for each run), what
 * the program wrote next may follow from that answer: the runs are compared up to there only.
 */
export const divergence = (baseline: CrashSwitch, run: CrashSwitch): string | undefined => {
  for (const [index, entries] of run.written.entries()) {
    const expected = baseline.written[index] ?? []
    if (shapesOf(entries) !== shapesOf(expected)) {
      const written = `its journal write ${index + 1} was [${shapesOf(entries, abridged)}] where the uncrashed run wrote [${shapesOf(expected, abridged) || "nothing"}]`
      return reordered(entries, expected, baseline)
        ? `the run did not repeat the uncrashed run: ${written}, an entry it wrote elsewhere (calls that run at once ended in another order: a world whose delays differ between runs reorders them, and crash points are counted in the uncrashed run's order; give its fakes fixed delays)`
        : `the run did not repeat the uncrashed run ${DETERMINISM_HINT}: ${written}`
    }
    if (answeredOtherwise(entries, expected)) return undefined
  }
  return undefined
}

/** An entry as `shapeOf` says it, but for where it fell (its seq). */
const placeless = (entry: Journal.Entry) => shapeOf({ ...entry, seq: 0 })

/** Where each step's call was in flight in a run: from its first `INTENT` to its first outcome. */
const inFlight = (entries: ReadonlyArray<Journal.Entry>): Map<string, { from: number; to: number }> => {
  const spans = new Map<string, { from: number; to: number }>()
  entries.forEach((entry, index) => {
    if (entry.stepId === null) return
    if (entry.phase === "INTENT" && !spans.has(entry.stepId)) spans.set(entry.stepId, { from: index, to: Infinity })
    const span = spans.get(entry.stepId)
    if ((entry.phase === "EXECUTED" || entry.phase === "FAILED") && span !== undefined && span.to === Infinity) {
      span.to = index
    }
  })
  return spans
}

/**
 * Whether a write that differs from the uncrashed run's holds only entries that run wrote too,
 * elsewhere, and one of its steps was in flight there at once with a step the uncrashed run wrote
 * at this write: calls that ran at once and ended in another order, not a program that changed.
 */
const reordered = (
  entries: ReadonlyArray<Journal.Entry>,
  expected: ReadonlyArray<Journal.Entry>,
  baseline: CrashSwitch
): boolean => {
  const all = baseline.written.flat()
  const written = new Set(all.map(placeless))
  if (!entries.every((entry) => written.has(placeless(entry)))) return false
  const spans = inFlight(all)
  const together = (one: string, other: string) => {
    const [a, b] = [spans.get(one), spans.get(other)]
    return a !== undefined && b !== undefined && a.from < b.to && b.from < a.to
  }
  return entries.some((entry) =>
    expected.some(
      (other) =>
        entry.stepId !== null &&
        other.stepId !== null &&
        entry.stepId !== other.stepId &&
        together(entry.stepId, other.stepId)
    )
  )
}

/** A crash point in words, from what the uncrashed run did there. */
export const describePoint = (point: Point, baseline: CrashSwitch): string =>
  point._tag === "AfterWrite"
    ? `a crash after journal write ${point.write} of ${baseline.writes} (${describeEntries(baseline.written[point.write - 1] ?? [])})`
    : `a crash after tool call ${point.call} of ${baseline.calls} ended (${describeCall(baseline.seen[point.call - 1]!)}), before its outcome was journaled`

/** The crash points of the kinds asked for, as many as the uncrashed run made writes and calls. */
export const pointsOf = (baseline: CrashSwitch, kinds: ReadonlyArray<CrashKind>): Array<Point> => [
  ...(kinds.includes("after-write")
    ? Array.from({ length: baseline.writes }, (_, i): Point => ({ _tag: "AfterWrite", write: i + 1 }))
    : []),
  ...(kinds.includes("before-outcome")
    ? Array.from({ length: baseline.calls }, (_, i): Point => ({ _tag: "BeforeOutcome", call: i + 1 }))
    : [])
]

/** At most `max` of `points`, chosen by a generator seeded with `seed`, in their order. */
export const choose = (points: Array<Point>, max: number, seed: number) =>
  points.length <= max
    ? Effect.succeed(points)
    : Effect.map(Random.make(seed).shuffle(points.keys()), (keys) =>
        Chunk.toArray(keys)
          .slice(0, max)
          .sort((a, b) => a - b)
          .map((key) => points[key]!)
      )
