/**
 * Effect operations a saga costs: `npx tsx bench/ops.ts [--list]`. A `Supervisor` with the
 * `OpSupervision` runtime flag on sees every operation the fibers it supervises run (`onEffect`),
 * so the count is exact and does not depend on the machine's load, unlike a time. Prints, for the
 * bench's saga on `Journal.layerMemory` with 0, 1 and 5 steps and for the journaling floor, the
 * operations a saga and how many of each kind; `--list` prints every operation of a one-step saga
 * with the function it runs, in order.
 */
import { Effect, Layer, ManagedRuntime, RuntimeFlags, RuntimeFlagsPatch, Supervisor } from "effect"
import { tools } from "./contenders.js"
import { floorSaga } from "./floor.js"
import { Approval, Journal, Saga } from "./library.js"

/** Counts the operations of the fibers it supervises, by kind; keeps each one's function if asked. */
class Counter extends Supervisor.AbstractSupervisor<void> {
  count = 0
  readonly byKind = new Map<string, number>()
  readonly listed: Array<string> = []
  constructor(private readonly listing: boolean) {
    super()
  }
  get value() {
    return Effect.void
  }
  override onEffect(_fiber: unknown, effect: Effect.Effect<unknown, unknown, unknown>): void {
    const op = effect as unknown as {
      readonly _op?: string
      effect_instruction_i0?: unknown
      effect_instruction_i1?: unknown
    }
    const kind = op._op ?? "?"
    this.count++
    this.byKind.set(kind, (this.byKind.get(kind) ?? 0) + 1)
    if (this.listing) {
      const runs = op.effect_instruction_i1 ?? op.effect_instruction_i0
      const source = typeof runs === "function" ? runs.name || runs.toString().replace(/\s+/g, " ").slice(0, 100) : ""
      this.listed.push(`${kind} ${source}`)
    }
  }
}

/** Runs `effect` supervised by `counter`, every operation seen. */
const counted = <A, E, R>(effect: Effect.Effect<A, E, R>, counter: Counter) =>
  Effect.withRuntimeFlagsPatch(Effect.supervised(effect, counter), RuntimeFlagsPatch.enable(RuntimeFlags.OpSupervision))

const runtime = ManagedRuntime.make(
  Saga.layer.pipe(Layer.provide(Layer.merge(Journal.layerMemory, Approval.layerMemory)))
)
let next = 0
const saga = (stepCount: number) => (n: number) =>
  Saga.run(
    `ops-${n}`,
    Effect.gen(function* () {
      for (const tool of tools.slice(0, stepCount)) yield* tool({ n })
    })
  )

const SAGAS = 4
const kinds = (counter: Counter) =>
  Array.from(counter.byKind)
    .sort((a, b) => b[1] - a[1])
    .map(([kind, count]) => `${kind} ${count / SAGAS}`)
    .join(", ")

const listing = process.argv.includes("--list")
for (const stepCount of [0, 1, 5]) {
  await runtime.runPromise(saga(stepCount)(next++)) // compiled and registered before counting
  const counter = new Counter(false)
  const ids = Array.from({ length: SAGAS }, () => next++)
  await runtime.runPromise(counted(Effect.forEach(ids, saga(stepCount), { discard: true }), counter))
  console.log(`effect-saga, ${stepCount} step(s): ${counter.count / SAGAS} operations a saga (${kinds(counter)})`)
}
const floor = new Counter(false)
await Effect.runPromise(
  counted(
    Effect.forEach(
      Array.from({ length: SAGAS }, (_, i) => i),
      floorSaga,
      { discard: true }
    ),
    floor
  )
)
console.log(`floor, 5 steps: ${floor.count / SAGAS} operations a saga (${kinds(floor)})`)

if (listing) {
  const one = new Counter(true)
  await runtime.runPromise(counted(saga(1)(next++), one))
  console.log(`\nevery operation of a one-step saga (${one.count}):`)
  for (const line of one.listed) console.log(`  ${line}`)
}
await runtime.dispose()
