/**
 * Benchmark contenders: each runs `count` five-step sagas one after another.
 *
 * Add a contender by adding an entry to `contenders` built with `fromLayer`:
 * a name, the Layer it runs on (built once per process and kept alive, so
 * whatever state it keeps accumulates naturally), and one saga given a
 * unique number (use it for distinct execution ids / payloads).
 */
import * as Activity from "@effect/workflow/Activity"
import * as Workflow from "@effect/workflow/Workflow"
import * as WorkflowEngine from "@effect/workflow/WorkflowEngine"
import { Effect, Layer, ManagedRuntime, Schema } from "effect"
import { floorSaga } from "./floor.js"
import { Approval, Compensable, Journal, Saga } from "./library.js"
import { StepResult, sagaOf, steps, toolsOf } from "./steps.js"

/** A benchmark contender: runs `count` five-step sagas sequentially. */
export interface Contender {
  readonly name: string
  readonly runSagas: (count: number) => Promise<void>
}

export { STEPS, StepInput, StepResult, steps } from "./steps.js"

/** Build a contender whose layer is built once (lazily) and reused by every `runSagas` call. */
export const fromLayer = <R, E>(
  name: string,
  layer: Layer.Layer<R, E>,
  saga: (n: number) => Effect.Effect<unknown, unknown, R>
): Contender => {
  let runtime: ManagedRuntime.ManagedRuntime<R, E> | undefined
  let next = 0
  return {
    name,
    runSagas: (count) => {
      if (count < 1) return Promise.resolve()
      runtime ??= ManagedRuntime.make(layer)
      const program = Effect.suspend(() => saga(next++)).pipe(Effect.repeatN(count - 1))
      return Effect.runPromise(Effect.provide(program, runtime)).then(() => undefined)
    }
  }
}

/** Baseline: the five steps run plainly in sequence with `Effect.gen`. */
const plain = fromLayer("plain", Layer.empty, () =>
  Effect.gen(function* () {
    for (const step of steps) yield* step
  })
)

/** The five steps as `@effect/workflow` activities. */
const activities = steps.map((execute, i) => Activity.make({ name: `step-${i + 1}`, success: StepResult, execute }))

/** A workflow whose execution id derives from the payload `id`. */
const BenchWorkflow = Workflow.make({
  name: "BenchSaga",
  payload: { id: Schema.String },
  idempotencyKey: ({ id }) => id
})

/** Registers the workflow (each activity with a trivial compensation) on the in-memory engine. */
const WorkflowLive = BenchWorkflow.toLayer(() =>
  Effect.gen(function* () {
    for (const activity of activities) {
      yield* activity.pipe(BenchWorkflow.withCompensation(() => Effect.void))
    }
  })
).pipe(Layer.provideMerge(WorkflowEngine.layerMemory))

/** `@effect/workflow` on `WorkflowEngine.layerMemory`: each saga is a new workflow execution. */
const workflow = fromLayer("workflow", WorkflowLive, (n) => BenchWorkflow.execute({ id: `saga-${n}` }))

/** The five steps as effect-saga tools, each with a trivial undo, keyed by the saga's number. */
export const tools = toolsOf(Compensable)

const SagaLive = Saga.layer.pipe(Layer.provide(Layer.merge(Journal.layerMemory, Approval.layerMemory)))

/** The saga every effect-saga figure is about: the five tools, each journaling INTENT and EXECUTED. */
export const saga = sagaOf({ Compensable, Saga })

/** effect-saga on `Journal.layerMemory`. */
const effectSaga = fromLayer("effect-saga", SagaLive, saga)

/**
 * Sagas in flight at once in the durable sections' concurrent figures (SQLite, PostgreSQL), and
 * sagas a batched floor transaction holds in the SQLite section.
 */
export const CONCURRENCY = 100

/** `count` numbers from `from`. */
export const range = (from: number, count: number) => Array.from({ length: count }, (_, i) => from + i)

/**
 * Runs `saga`s on `runtime`, one after another or `CONCURRENCY` at once, each call numbering on
 * from where the last stopped (every saga is new).
 */
export const sagaRunner = (runtime: ManagedRuntime.ManagedRuntime<Saga.Saga, unknown>) => {
  let next = 0
  const run = (count: number, concurrency: number) => {
    const from = next
    next += count
    return runtime.runPromise(Effect.forEach(range(from, count), saga, { concurrency, discard: true }))
  }
  return { oneByOne: (count: number) => run(count, 1), concurrent: (count: number) => run(count, CONCURRENCY) }
}

/** The journaling floor (bench/floor.ts): encoding, hashing and keeping two entries a step, in a span, nothing else. */
const floor = fromLayer("floor", Layer.empty, floorSaga)

/** All contenders by name; `workflow` and `floor` are the references for ratios. */
export const contenders: Record<string, Contender> = { plain, floor, workflow, "effect-saga": effectSaga }
