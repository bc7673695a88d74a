/**
 * A signal reaches a Node process only when its event loop turns. The CLI's commands run on a
 * scheduler that lets it turn every few milliseconds of computing (`SignalsHeard`), so that SIGINT
 * stops a command that computes for seconds without waiting on I/O (`verify --all` of thousands of
 * sagas on SQLite, whose driver is synchronous). A `setImmediate` callback stands for the signal
 * here: both wait for the event loop.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { SignalsHeard } from "../src/internal/cli/signalsHeard.js"

/**
 * Runs pure computation, turn after turn, until the event loop has run or `turns` have passed:
 * how many turns ran before the loop did, or `undefined` if it never did.
 */
const turnsBeforeTheLoop = async (
  turns: number,
  withScheduler: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
) => {
  let loopRan = false
  setImmediate(() => {
    loopRan = true
  })
  let heardAt: number | undefined
  let turn = 0
  const busy = Effect.whileLoop({
    while: () => heardAt === undefined && turn < turns,
    body: () =>
      Effect.sync(() => {
        turn++
        if (loopRan) heardAt = turn
      }),
    step: () => undefined
  })
  await Effect.runPromise(withScheduler(busy))
  return heardAt
}

describe("a command busy computing", () => {
  it("lets the event loop turn on the CLI's scheduler, so a signal is heard before the command ends", async () => {
    const heardAt = await turnsBeforeTheLoop(5_000_000, (effect) => Effect.withScheduler(effect, new SignalsHeard()))
    expect(heardAt).toBeDefined()
  })

  it("keeps the order of what it runs: fibers forked in turn run in turn", async () => {
    const order: Array<number> = []
    const fibers = Effect.forEach(
      Array.from({ length: 200 }, (_, index) => index),
      (index) =>
        Effect.fork(
          Effect.zipRight(
            Effect.yieldNow(),
            Effect.sync(() => order.push(index))
          )
        ),
      { discard: true }
    )
    await Effect.runPromise(Effect.withScheduler(Effect.zipRight(fibers, Effect.sleep(50)), new SignalsHeard()))
    expect(order).toEqual(Array.from({ length: 200 }, (_, index) => index))
  })

  it("would not on Effect's default scheduler: the loop waited for 100,000 turns of computation", async () => {
    expect(await turnsBeforeTheLoop(100_000, (effect) => effect)).toBeUndefined()
  })
})
