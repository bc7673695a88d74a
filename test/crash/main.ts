/**
 * The crash harness from the command line:
 *
 *   npm run crash -- --kills 200 [--concurrency 6] [--max-delay 400] [--seed N] [--dir path] [--tsx] [--quiet]
 *                    [--pg postgres://…]
 *
 * `--pg` keeps the journal in that PostgreSQL database (an empty one) instead of an SQLite file.
 * `--tsx` runs the children through tsx's loader instead of compiling them first (slower to start).
 *
 * Prints a line per kill (unless `--quiet`), then the figures and the checks; exits 1 if a check
 * fails. The journal and the world are written to `--dir` (default: a fresh temporary directory,
 * removed after a run that passes, kept and named after one that fails).
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { parseArgs } from "node:util"
import * as Effect from "effect/Effect"
import { runCrashHarness } from "./harness.js"
import { formatFigures, formatRestart } from "./report.js"

const { values } = parseArgs({
  options: {
    kills: { type: "string", default: "200" },
    concurrency: { type: "string" },
    "max-delay": { type: "string" },
    seed: { type: "string" },
    dir: { type: "string" },
    tsx: { type: "boolean", default: false },
    quiet: { type: "boolean", default: false },
    pg: { type: "string" }
  }
})

const number = (text: string | undefined) => (text === undefined ? undefined : Number(text))
const dir = values.dir ?? fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-crash-"))

const run = runCrashHarness({
  kills: Number(values.kills),
  dir,
  postgres: values.pg,
  concurrency: number(values.concurrency),
  maxKillDelayMillis: number(values["max-delay"]),
  seed: number(values.seed),
  runner: values.tsx ? "tsx" : "compiled",
  onRestart: values.quiet ? undefined : (restart) => console.log(formatRestart(restart))
})

Effect.runPromise(run).then(
  (figures) => {
    console.log(formatFigures(figures))
    if (figures.passed && values.dir === undefined) fs.rmSync(dir, { recursive: true, force: true })
    if (!figures.passed) console.log(`the journal and the world are kept in ${dir}`)
    process.exitCode = figures.passed ? 0 : 1
  },
  (error) => {
    console.error(`the crash harness could not finish: ${error instanceof Error ? error.message : String(error)}`)
    console.error(`the journal and the world are kept in ${dir}`)
    process.exitCode = 1
  }
)
