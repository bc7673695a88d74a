/**
 * Child entry point: `node --expose-gc --import tsx bench/memory.ts <contender> [count]`.
 * Runs `count` (default 10,000) sagas in one process; the contender's runtime (and any state
 * it keeps) stays reachable from the module-level `contenders` record while measuring.
 * Prints one JSON line: a `MemoryResult`.
 */
import { contenders, STEPS } from "./contenders.js"

/** Result line printed by the child and parsed by `bench/index.ts`. */
export interface MemoryResult {
  readonly name: string
  readonly count: number
  readonly baselineRssMB: number
  readonly peakRssMB: number
  readonly heapUsedMB: number
  /** µs per step over this cold (no warm-up) run. */
  readonly coldUsPerStep: number
}

const [name = "", countArg = "10000"] = process.argv.slice(2)
const contender = contenders[name]
if (!contender) throw new Error(`unknown contender "${name}"; known: ${Object.keys(contenders).join(", ")}`)
const count = Number(countArg)
const MB = 1024 * 1024

const baselineRssMB = process.memoryUsage().rss / MB
const start = performance.now()
await contender.runSagas(count)
const elapsed = performance.now() - start
globalThis.gc?.()
const result: MemoryResult = {
  name,
  count,
  baselineRssMB,
  peakRssMB: process.resourceUsage().maxRSS / 1024, // maxRSS is in KB
  heapUsedMB: process.memoryUsage().heapUsed / MB,
  coldUsPerStep: (elapsed * 1000) / (count * STEPS)
}
console.log(JSON.stringify(result))
