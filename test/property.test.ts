import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Schema from "effect/Schema"
import { Compensable, Journal, Saga } from "../src/index.js"
import * as Testing from "../src/Testing.js"

describe("compensation of random sagas", () => {
  it.effect.prop(
    "undoes every executed step once, in reverse execution order, and never a failed one",
    { plan: Plan },
    ({ plan }) =>
      Effect.gen(function* () {
        const undone: Array<number> = []
        const result = yield* Saga.run("s", program(makeTool(undone), plan))
        const report = result._tag === "Completed" ? yield* Saga.compensate("s") : yield* reportOf(result)
        const entries = yield* Effect.flatMap(Journal.Journal, (journal) => journal.read("s"))

        const executedEntries = entries.filter((e) => e.phase === "EXECUTED")
        const executed = executedEntries.map((e) => e.stepId!)
        const failed = entries.filter((e) => e.phase === "FAILED").map((e) => e.stepId!)
        const undoneIds = report.undone.map((s) => s.stepId)
        expect(undoneIds).toEqual(executed.slice().reverse())
        expect(new Set(undoneIds).size).toBe(undoneIds.length)
        expect(report.notUndone.map((s) => s.stepId).sort()).toEqual(failed.slice().sort())
        expect(entries.filter((e) => e.phase === "COMPENSATING" && failed.includes(e.stepId!))).toEqual([])

        const ran = plan.flat().filter((step) => !step.fails)
        expect(executed).toHaveLength(ran.length)
        expect(undone).toEqual(executedEntries.map((e) => JSON.parse(e.payload!).result).reverse())
        expect(undone.slice().sort()).toEqual(ran.map((step) => step.id).sort())
        expect(report.status).toBe(ran.some((step) => step.undoFails) ? "compensation_failed" : "compensated")

        expect(Journal.verifyEntries(entries)._tag).toBe("Intact")
        expect(entries.map((e) => e.seq)).toEqual(entries.map((_, i) => i + 1))
      }).pipe(Effect.provide(Testing.layer)),
    { timeout: 30_000, fastCheck: { numRuns: 100 } }
  )
})

/**
 * One step: how long it takes (in yields to the scheduler, so parallel steps finish out of order),
 * whether its call fails, whether its undo fails, and whether it runs beside the previous step.
 */
const Step = FastCheck.record({
  delay: FastCheck.integer({ min: 0, max: 20 }),
  fails: FastCheck.boolean(),
  undoFails: FastCheck.boolean(),
  parallel: FastCheck.boolean()
})

/**
 * 1..8 steps in groups: the groups run in sequence, the steps of a group in parallel. The program
 * catches every failure and goes on, so a tainted saga compensates when it ends.
 */
const Plan = FastCheck.array(Step, { minLength: 1, maxLength: 8 }).map((steps) => {
  const groups: Array<Array<PlannedStep>> = []
  steps.forEach(({ parallel, ...step }, id) => {
    if (parallel && groups.length > 0) groups.at(-1)!.push({ ...step, id })
    else groups.push([{ ...step, id }])
  })
  return groups
})

interface PlannedStep {
  readonly id: number
  readonly delay: number
  readonly fails: boolean
  readonly undoFails: boolean
}

const makeTool = (undone: Array<number>) =>
  Compensable.make({
    name: "step",
    input: Schema.Struct({ id: Schema.Number, delay: Schema.Number, fails: Schema.Boolean, undoFails: Schema.Boolean }),
    success: Schema.Number,
    execute: ({ id, delay, fails }) =>
      Effect.zipRight(
        Effect.repeatN(Effect.yieldNow(), delay),
        fails ? Effect.fail(new Error(`step ${id} failed`)) : Effect.succeed(id)
      ),
    compensate: ({ input }) =>
      Effect.zipRight(
        Effect.sync(() => undone.push(input.id)),
        input.undoFails ? Effect.fail(new Error(`undo ${input.id} failed`)) : Effect.void
      )
  })

const program = (tool: ReturnType<typeof makeTool>, plan: ReadonlyArray<ReadonlyArray<PlannedStep>>) =>
  Effect.forEach(plan, (group) =>
    Effect.all(
      group.map((step) => Effect.either(tool(step))),
      { concurrency: "unbounded" }
    )
  )

const reportOf = (result: Saga.SagaResult<unknown, unknown>) =>
  result._tag === "Compensated" || result._tag === "CompensationFailed"
    ? Effect.succeed(result.report)
    : Effect.dieMessage(`unexpected result ${result._tag}`)
