/**
 * What a saga costs V8's garbage collector: `npx tsx bench/gc.ts [--seconds N] [--rounds N]`.
 * Runs the journaling floor and effect-saga (on `Journal.layerMemory`), each in a child process of
 * its own with `--trace-gc-nvp` (bench/gc-child.ts), taking turns for `--rounds` rounds (default
 * 2), and prints for each the bytes allocated a saga, the bytes young collections copied to the old
 * generation a saga ("promoted": what outlived two of them, or was kept alive by an old object),
 * the time young collections paused the program a saga, and the wall time a saga, with each
 * contender's figures against the floor's. Unlike a time, the allocated and promoted bytes hardly
 * depend on the machine's load. See docs/performance.md, sixth pass.
 */
import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import type { GcChildResult } from "./gc-child.js"
import { printTable } from "./table.js"

const argument = (flag: string, fallback: number) => {
  const at = process.argv.indexOf(flag)
  return at > 0 ? Number(process.argv[at + 1]) : fallback
}
const SECONDS = argument("--seconds", 4)
const ROUNDS = argument("--rounds", 2)
const CONTENDERS = ["floor", "effect-saga"] as const

/** Per saga: KB allocated, KB promoted, µs of scavenge pauses, µs of wall time. */
interface GcFigures {
  readonly allocatedKb: number
  readonly promotedKb: number
  readonly scavengeUs: number
  readonly wallUs: number
}

/** A `key=value` field of one `--trace-gc-nvp` line. */
const field = (line: string, key: string): number => {
  const match = new RegExp(`(?:^|\\s)${key}=([0-9.]+)`).exec(line)
  return match === null ? 0 : Number(match[1])
}

/** The figures of one child's output: the scavenges after its `measure` line, over its sagas. */
const figuresOf = (stdout: string): GcFigures => {
  const lines = stdout.split("\n")
  const from = lines.indexOf("measure")
  const result = JSON.parse(lines.filter((line) => line.startsWith("{")).at(-1) ?? "{}") as GcChildResult
  let allocated = 0
  let promoted = 0
  let pause = 0
  for (const line of lines.slice(from + 1)) {
    if (!/(?:^|\s)gc=s(?:\s|$)/.test(line)) continue
    allocated += field(line, "allocated")
    promoted += field(line, "promoted")
    pause += field(line, "pause")
  }
  return {
    allocatedKb: allocated / 1024 / result.sagas,
    promotedKb: promoted / 1024 / result.sagas,
    scavengeUs: (pause * 1000) / result.sagas,
    wallUs: (result.ms * 1000) / result.sagas
  }
}

const exec = promisify(execFile)
const childEntry = fileURLToPath(new URL("./gc-child.ts", import.meta.url))
const projectRoot = fileURLToPath(new URL("..", import.meta.url))

const measure = async (name: string): Promise<GcFigures> => {
  const args = ["--trace-gc-nvp", "--import", "tsx", childEntry, name, String(SECONDS)]
  const { stdout } = await exec(process.execPath, args, { cwd: projectRoot, maxBuffer: 1 << 28 })
  return figuresOf(stdout)
}

/** The lower of two rounds' figures, each figure on its own (the machine is shared). */
const lowest = (a: GcFigures, b: GcFigures): GcFigures => ({
  allocatedKb: Math.min(a.allocatedKb, b.allocatedKb),
  promotedKb: Math.min(a.promotedKb, b.promotedKb),
  scavengeUs: Math.min(a.scavengeUs, b.scavengeUs),
  wallUs: Math.min(a.wallUs, b.wallUs)
})

const best = new Map<string, GcFigures>()
for (let round = 0; round < ROUNDS; round++) {
  for (const name of CONTENDERS) {
    const figures = await measure(name)
    const before = best.get(name)
    best.set(name, before === undefined ? figures : lowest(before, figures))
  }
}

const floor = best.get("floor")!
console.log(
  `Garbage a five-step saga leaves, in memory (${ROUNDS} rounds of ${SECONDS} s a contender after 2 s of warm-up, ` +
    "each in a process of its own; the lowest of each figure):"
)
const header = ["contender", "KB allocated", "KB promoted", "µs of scavenges", "µs a saga (wall)"]
const rows = CONTENDERS.map((name) => {
  const f = best.get(name)!
  const ratio = (value: number, reference: number) => (name === "floor" ? "" : ` (${(value / reference).toFixed(2)}×)`)
  return [
    name,
    `${f.allocatedKb.toFixed(1)}${ratio(f.allocatedKb, floor.allocatedKb)}`,
    `${f.promotedKb.toFixed(1)}${ratio(f.promotedKb, floor.promotedKb)}`,
    `${f.scavengeUs.toFixed(1)}${ratio(f.scavengeUs, floor.scavengeUs)}`,
    `${f.wallUs.toFixed(1)}${ratio(f.wallUs, floor.wallUs)}`
  ]
})
printTable(header, rows)
