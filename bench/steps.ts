/** The five trivial steps every contender of the benchmark performs, and their schemas. */
import { Effect, Schema } from "effect"

/** Number of steps in every saga. */
export const STEPS = 5

/** The five trivial steps every contender performs, each returning `{ id: "res-N" }`. */
export const steps = Array.from({ length: STEPS }, (_, i) => Effect.succeed({ id: `res-${i + 1}` }))

/** Schema of a step's input (for engines that journal inputs): the saga's number. */
export const StepInput = Schema.Struct({ n: Schema.Number })

/** Schema of a step's result (for engines that serialize results). */
export const StepResult = Schema.Struct({ id: Schema.String })

/** A tool of the bench's saga: called with the saga's number, run in a saga. */
type BenchTool = (input: { readonly n: number }) => Effect.Effect<unknown, unknown, any>

/**
 * What the bench's saga needs of effect-saga: the library built (`bench/library.ts`), its source,
 * or another checkout's in an A/B run.
 */
export interface SagaLibrary {
  readonly Compensable: {
    readonly make: (spec: {
      readonly name: string
      readonly input: typeof StepInput
      readonly success: typeof StepResult
      readonly execute: () => Effect.Effect<{ readonly id: string }>
      readonly compensate: () => Effect.Effect<void>
    }) => BenchTool
  }
  readonly Saga: {
    readonly run: (sagaId: string, program: Effect.Effect<void, unknown, any>) => Effect.Effect<unknown, unknown, any>
  }
}

/** The five steps as tools of `Compensable` (of a `SagaLibrary`), each with a trivial undo. */
export const toolsOf = (Compensable: SagaLibrary["Compensable"]) =>
  steps.map((execute, i) =>
    Compensable.make({
      name: `step-${i + 1}`,
      input: StepInput,
      success: StepResult,
      execute: () => execute,
      compensate: () => Effect.void
    })
  )

/**
 * The bench's saga on `library` (this checkout's, or another one's in an A/B run): saga `saga-<n>`
 * calling the five tools in turn with input `{ n }`.
 */
export const sagaOf = (library: SagaLibrary) => {
  const tools = toolsOf(library.Compensable)
  return (n: number) =>
    library.Saga.run(
      `saga-${n}`,
      Effect.gen(function* () {
        for (const tool of tools) yield* tool({ n })
      })
    )
}
