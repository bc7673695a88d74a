/**
 * `effect-saga import -` reads stdin to its end, however slowly its writer goes; interrupted
 * (SIGINT, SIGTERM) while stdin is still open, it stops reading and destroys stdin, so that the
 * process ends (exit 130) instead of waiting for a writer that may never close it (a terminal).
 */
import { PassThrough } from "node:stream"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Fiber } from "effect"
import { readInput } from "../src/internal/cli/commands/import.js"

describe("effect-saga import -", () => {
  it.effect("reads stdin to its end, written in pieces", () =>
    Effect.gen(function* () {
      const stdin = new PassThrough()
      const reading = yield* Effect.fork(readInput("-", stdin))
      stdin.write('{"first":1}\n')
      yield* Effect.yieldNow()
      stdin.end('{"second":2}\n')
      expect(yield* Fiber.join(reading)).toBe('{"first":1}\n{"second":2}\n')
    })
  )

  it.effect("interrupted while stdin is still open: the read ends interrupted and stdin is destroyed", () =>
    Effect.gen(function* () {
      const stdin = new PassThrough()
      stdin.write('{"first":1}\n')
      const reading = yield* Effect.fork(readInput("-", stdin))
      yield* Effect.yieldNow()
      expect(stdin.destroyed).toBe(false)
      const exit = yield* Fiber.interrupt(reading)
      expect(Exit.isInterrupted(exit)).toBe(true)
      expect(stdin.destroyed).toBe(true)
    })
  )
})
