/** The crash harness's figures and checks as a person reads them. */
import type { CrashFigures, Restart } from "./harness.js"

/** How many failures of one check are printed; the count says how many there are in all. */
const shownFailures = 10

const mean = (values: ReadonlyArray<number>) =>
  values.length === 0 ? 0 : Math.round(values.reduce((sum, value) => sum + value, 0) / values.length)

const max = (values: ReadonlyArray<number>) => values.reduce((most, value) => Math.max(most, value), 0)

const spread = (values: ReadonlyArray<number>) => `mean ${mean(values)} ms, max ${max(values)} ms`

const seconds = (millis: number) => `${(millis / 1000).toFixed(1)} s`

/** One line per restart, for progress output. */
export const formatRestart = (restart: Restart): string =>
  `child ${restart.generation}: loaded in ${restart.startupMillis} ms, ` +
  (restart.recovery === undefined
    ? "killed before it had recovered"
    : `recovered ${restart.recovery.sagas} sagas in ${restart.recovery.millis} ms`) +
  `, killed ${restart.delayMillis} ms after ${restart.aimedAt === "work" ? "working" : "opening"}`

/** The figures, then each check with the first of its failures. */
export const formatFigures = (figures: CrashFigures): string => {
  const { audit, finalRecovery, restarts } = figures
  const a = audit.figures
  const recovered = restarts.flatMap((restart) => (restart.recovery === undefined ? [] : [restart.recovery]))
  const statuses = Object.entries(a.byStatus)
    .sort(([x], [y]) => x.localeCompare(y))
    .map(([status, count]) => `${status} ${count}`)
    .join(", ")
  const lines = [
    `crash harness: ${figures.kills} kills in ${seconds(figures.wallMillis)} (seed ${figures.seed})`,
    `  kills: ${figures.kills}, ${restarts.filter((restart) => restart.aimedAt === "startup").length} aimed at start-up, ` +
      `${restarts.length - recovered.length} landed before the child was ready, ` +
      `${figures.ordersByChild.filter((orders) => orders === 0).length} before it had journaled an order of its own`,
    `  sagas started: ${a.sagas} (${statuses})`,
    `  steps executed: ${a.stepsExecuted}; forward effects in the world: ${a.forwardEffects} ` +
      `(${a.forwardCalls} calls, ${a.forwardCalls - a.forwardEffects} replays ignored by the idempotency key)`,
    `  unknown outcomes: ${a.retriedAfterUnknown} steps retried with their key, ${a.unknownSurfaced} surfaced as NeedsAttention`,
    `  undos: ${a.undoEffects} applied in the world; journaled ${a.undosCompensated} compensated, ` +
      `${a.undosUnknown} unknown (the crash hid the outcome), ${a.undosSkipped} skipped (no undo)`,
    `  entries verified: ${a.entriesVerified}`,
    `  child start-up (${figures.runner}): ${spread(restarts.map((restart) => restart.startupMillis))}`,
    `  recovery per restart: ${spread(recovered.map((recovery) => recovery.millis))}, ` +
      `${(recovered.reduce((sum, recovery) => sum + recovery.sagas, 0) / Math.max(1, recovered.length)).toFixed(1)} sagas on average`,
    `  final recovery: ${finalRecovery.sagas} sagas in ${finalRecovery.millis} ms, ${finalRecovery.passes} passes`,
    "checks:"
  ]
  for (const check of figures.checks) {
    const count = check.failures.length
    lines.push(`  ${count === 0 ? "ok  " : "FAIL"} ${check.name}${count === 0 ? "" : ` (${count} failures)`}`)
    for (const failure of check.failures.slice(0, shownFailures)) lines.push(`         ${failure}`)
    if (count > shownFailures) lines.push(`         … and ${count - shownFailures} more`)
  }
  return lines.join("\n")
}
