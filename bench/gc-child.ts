/**
 * Child entry point of `bench/gc.ts`: `node --trace-gc-nvp --import tsx bench/gc-child.ts <contender> [seconds]`.
 * Runs the contender's five-step sagas one after another for 2 s of warm-up, prints `measure`, runs
 * them for `seconds` more (default 4), then prints one JSON line: a `GcChildResult`. V8 prints a
 * line for each collection meanwhile (`gc=s` for a scavenge), which the parent reads.
 */
import { contenders } from "./contenders.js"

/** The child's last line. */
export interface GcChildResult {
  readonly sagas: number
  readonly ms: number
}

const [name = "", secondsArg = "4"] = process.argv.slice(2)
const contender = contenders[name]
if (!contender) throw new Error(`unknown contender "${name}"; known: ${Object.keys(contenders).join(", ")}`)
const BATCH = 100

const runFor = async (ms: number) => {
  const start = performance.now()
  let sagas = 0
  while (performance.now() - start < ms) {
    await contender.runSagas(BATCH)
    sagas += BATCH
  }
  return { sagas, ms: performance.now() - start }
}

await runFor(2000)
console.log("measure")
const result: GcChildResult = await runFor(Number(secondsArg) * 1000)
console.log(JSON.stringify(result))
