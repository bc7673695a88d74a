/**
 * `effect-saga import -` and `resolve --receipt -` read stdin to its end, however slowly its writer
 * goes (a synchronous read of a pipe still empty failed with EAGAIN); interrupted (SIGINT, SIGTERM)
 * while stdin is still open, they stop reading and destroy stdin, so that the process ends (exit
 * 130) instead of waiting for a writer that may never close it (a terminal).
 */
import { PassThrough } from "node:stream"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Redacted } from "effect"
import { readInput } from "../src/internal/cli/commands/import.js"
import * as ReceiptSource from "../src/internal/cli/receiptSource.js"

describe("reading stdin: import -, resolve --receipt -", () => {
  it.effect("import -: reads stdin to its end, written in pieces", () =>
    Effect.gen(function* () {
      const stdin = new PassThrough()
      const reading = yield* Effect.fork(readInput("-", stdin))
      stdin.write('{"first":1}\n')
      yield* Effect.yieldNow()
      stdin.end('{"second":2}\n')
      expect(yield* Fiber.join(reading)).toBe('{"first":1}\n{"second":2}\n')
    })
  )

  it.effect("import -: interrupted while stdin is still open: the read ends interrupted and stdin is destroyed", () =>
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

  it.effect(
    "resolve --receipt -: a receipt written in pieces is read whole, its one line end dropped; none at all is refused",
    () =>
      Effect.gen(function* () {
        const stdin = new PassThrough()
        const reading = yield* Effect.fork(ReceiptSource.read("-", stdin))
        stdin.write("rcpt-")
        yield* Effect.yieldNow()
        stdin.end("4711\n")
        expect(Redacted.value(yield* Fiber.join(reading))).toBe("rcpt-4711")
        const empty = new PassThrough()
        empty.end()
        const refused = yield* Effect.flip(ReceiptSource.read("-", empty))
        expect(refused.message).toBe("--receipt: stdin is empty: pipe the receipt in")
      })
  )
})
