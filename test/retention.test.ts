import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as v8 from "node:v8"
import * as vm from "node:vm"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { Compensable, Saga, SqlStore } from "../src/index.js"
import { JournalView } from "../src/internal/journal/view.js"
import { Mutex } from "../src/internal/util/mutex.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-retention-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

describe("a process running sagas on a durable journal", () => {
  it.scoped(
    "keeps nothing per completed saga: no fiber, journal view, lock, map or set, no result, no heap grows with the sagas run",
    () =>
      Effect.gen(function* () {
        const counts = yield* counters
        const watched: Array<WeakRef<object>> = []
        // Warm up first (statements prepared, code compiled, metric keys filled), then measure.
        yield* runSagas(0, WARM_UP)
        const before = yield* settled(counts)
        yield* runSagas(WARM_UP, SAGAS, (n, value) => n < WARM_UP + WATCHED && watched.push(new WeakRef(value)))
        const after = yield* settled(counts)

        // A run that stayed behind would keep its fiber, its journal view, its lock or its maps.
        for (const [kind, count] of Object.entries(after.counts)) {
          expect(count - before.counts[kind]!, kind).toBeLessThanOrEqual(SLACK)
        }
        expect(watched).toHaveLength(WATCHED)
        expect(watched.filter((value) => value.deref() !== undefined)).toHaveLength(0)
        // Anything smaller than those, kept per saga, still shows on the heap, SAGAS times over.
        expect((after.heapBytes - before.heapBytes) / SAGAS).toBeLessThan(MAX_BYTES_PER_SAGA)
      }).pipe(Effect.provide(layer())),
    120_000
  )

  // A tool's registered context leaves out the caller's span (src/internal/engine/run.ts): the registry
  // keeps the context of a tool's first call, and a span holds its saga's exit, so its result.
  it.scoped(
    "keeps no result of the saga that first called a tool",
    () =>
      Effect.gen(function* () {
        const counts = yield* counters
        const watched: Array<WeakRef<object>> = []
        yield* runSagas(0, 10, (_n, value) => watched.push(new WeakRef(value)))
        yield* settled(counts)
        expect(watched).toHaveLength(10)
        expect(watched.filter((value) => value.deref() !== undefined)).toHaveLength(0)
      }).pipe(Effect.provide(layer())),
    // Collections until the heap settles: seconds on a loaded machine.
    60_000
  )
})

/** Sagas run before measuring, and measured. */
const WARM_UP = 500
const SAGAS = 500
const CONCURRENCY = 100
/** Values returned by the first sagas, watched until a collection frees them. */
const WATCHED = 100
/** Objects of a kind that may differ between two reads for reasons that do not grow with the sagas. */
const SLACK = 5
/** Well below what keeping a saga's 8 entries would cost (≈ 2 KB); the warmed-up engine still adds ≈ 70 bytes a saga. */
const MAX_BYTES_PER_SAGA = 256

const StepInput = Schema.Struct({ n: Schema.Number })

const tools = Array.from({ length: 3 }, (_, i) =>
  Compensable.make({
    name: `retention-step-${i + 1}`,
    input: StepInput,
    success: Schema.Struct({ n: Schema.Number, step: Schema.Number }),
    execute: ({ n }) => Effect.succeed({ n, step: i + 1 }),
    compensate: () => Effect.void
  })
)

/** Three steps; the value each saga returns is a fresh object nothing else refers to. */
const program = (n: number) =>
  Effect.gen(function* () {
    let last = 0
    for (const tool of tools) last = (yield* tool({ n })).step
    return { n, last }
  })

let file = 0
const layer = () =>
  Saga.layer.pipe(
    Layer.provideMerge(
      SqlStore.layerSqlite({ filename: path.join(dir, `journal-${++file}.db`), synchronous: "normal" })
    )
  )

/** A full, synchronous collection, without starting the worker with `--expose-gc`. */
const collectGarbage = (() => {
  v8.setFlagsFromString("--expose-gc")
  const gc = vm.runInNewContext("gc") as () => void
  return () => gc()
})()

/** Runs `count` new sagas from number `from`, `CONCURRENCY` at once, each completing with a value. */
const runSagas = (from: number, count: number, onValue: (n: number, value: object) => unknown = () => undefined) =>
  Effect.flatMap(Saga.Saga, (saga) =>
    Effect.forEach(
      Array.from({ length: count }, (_, i) => from + i),
      (n) =>
        Effect.map(saga.run(`retention-${n}`, program(n)), (result) => {
          expect(result._tag).toBe("Completed")
          if (result._tag === "Completed") onValue(n, result.value)
        }),
      { concurrency: CONCURRENCY, discard: true }
    )
  )

/** Counts the live objects of each kind a saga's run makes. */
const counters = Effect.map(
  Effect.withFiberRuntime<Function>((fiber) => Effect.succeed(fiber.constructor)),
  (fiberRuntime) => (): Record<string, number> => ({
    fibers: live(fiberRuntime),
    views: live(JournalView),
    locks: live(Mutex),
    maps: live(Map),
    sets: live(Set)
  })
)

/** Objects on the heap made by `constructor` (or a subclass). */
const live = (constructor: Function): number => v8.queryObjects(constructor, { format: "count" })

/**
 * The counts and the heap after a full collection, in a new task: a `WeakRef`'s target is kept
 * alive until the task that made it ends.
 */
const settled = (counts: () => Record<string, number>) =>
  Effect.map(
    Effect.promise(() => new Promise((resolve) => setImmediate(resolve))),
    () => {
      collectGarbage()
      return { counts: counts(), heapBytes: process.memoryUsage().heapUsed }
    }
  )
