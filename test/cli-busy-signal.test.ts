/**
 * A signal reaches a Node process only when its event loop runs. The CLI's commands run on a
 * scheduler that lets it run every few yields (`signalsHeard`), so that SIGINT stops a command that
 * computes for seconds without I/O (`verify --all` of thousands of sagas on SQLite, whose driver is
 * synchronous). A `setImmediate` callback stands for the signal here: both wait for the event loop.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { signalsHeard } from "../src/internal/cli/app.js"

/** Whether the event loop ran while 100,000 turns of pure computation ran on the scheduler given. */
const loopRanDuring = async (withScheduler: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>) => {
  let loopRan = false
  setImmediate(() => {
    loopRan = true
  })
  let seenBeforeTheEnd = false
  const busy = Effect.forEach(
    Array.from({ length: 100_000 }, (_, index) => index),
    () =>
      Effect.sync(() => {
        if (loopRan) seenBeforeTheEnd = true
      }),
    { discard: true }
  )
  await Effect.runPromise(withScheduler(busy))
  return seenBeforeTheEnd
}

describe("a command busy computing", () => {
  it("lets the event loop run on the CLI's scheduler, so a signal is heard before it ends", async () => {
    expect(await loopRanDuring((effect) => Effect.withScheduler(effect, signalsHeard))).toBe(true)
  })

  it("would not on Effect's default scheduler: the loop waited for the whole computation", async () => {
    expect(await loopRanDuring((effect) => effect)).toBe(false)
  })
})
