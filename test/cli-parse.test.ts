import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Either, Option, Schema } from "effect"
import * as Parse from "../src/internal/cli/parse.js"
import { Instant } from "../src/internal/http/models.js"
import { cutoff } from "../src/internal/util/isoTime.js"

describe("the CLI reads durations and times as the library does", () => {
  it.effect("a duration: the short form and Effect's, never negative nor over 10000 years", () =>
    Effect.gen(function* () {
      expect(Duration.toMillis(yield* Parse.duration("--older-than", "90s"))).toBe(90_000)
      expect(Duration.toMillis(yield* Parse.duration("--older-than", "2 hours"))).toBe(7_200_000)
      expect(Duration.toMillis(yield* Parse.duration("--older-than", "0m"))).toBe(0)
      for (const text of ["-5m", "-5 minutes", "-0 seconds", "yesterday", ""]) {
        const error = yield* Effect.flip(Parse.duration("--older-than", text))
        expect(error.message).toBe(`--older-than: "${text}" is not a duration (e.g. 90s, 30m, 2h, 7d)`)
      }
      for (const text of ["99999999999999999999d", "3652426d", "999999999 weeks"]) {
        const error = yield* Effect.flip(Parse.duration("--older-than", text))
        expect(error.message).toBe(`--older-than: "${text}" is longer than 10000 years`)
      }
      expect(Duration.toMillis(yield* Parse.duration("--older-than", "3652425d"))).toBe(3_652_425 * 86_400_000)
    })
  )

  // Each form, and what the CLI, the HTTP API's `Instant` and `prune`/`list` (`cutoff`) make of it.
  const forms: ReadonlyArray<readonly [string, string | undefined]> = [
    ["2025-01-31", "2025-01-31T00:00:00.000Z"],
    ["2025-01-31T13:00+01:00", "2025-01-31T12:00:00.000Z"],
    ["2025-01-31T12:00:00.0001Z", "2025-01-31T12:00:00.001Z"],
    ["2025-01-31T12:00:00.123456789Z", "2025-01-31T12:00:00.124Z"],
    ["+002025-01-31", "2025-01-31T00:00:00.000Z"],
    ["+010000-01-01", "9999-12-31T23:59:59.999Z"],
    ["2024-02-29", "2024-02-29T00:00:00.000Z"],
    ["2025-02-29", undefined],
    ["2025-01-31T12:00:00", undefined],
    ["31/12/2024", undefined],
    ["-000000-01-01", undefined],
    ["", undefined]
  ]
  for (const [text, time] of forms) {
    it.effect(
      `a time ${JSON.stringify(text)} reads ${time ?? "as none"} in the CLI, the HTTP API and prune alike`,
      () =>
        Effect.gen(function* () {
          const cli = yield* Effect.either(Parse.instant("--finished-before", text))
          const http = Schema.decodeUnknownEither(Instant)(text)
          const library = cutoff(text)
          expect(Either.getOrUndefined(cli)).toBe(time)
          expect(Either.getOrUndefined(http)).toBe(time)
          expect(Either.getOrUndefined(library)).toBe(time)
          if (time === undefined) {
            // The CLI says why as the library does, after the flag's name.
            expect(Either.isLeft(cli) && cli.left.message).toBe(
              `--finished-before: ${Either.getLeft(library).pipe(Option.getOrThrow)}`
            )
            expect(Either.getLeft(library).pipe(Option.getOrThrow)).toBe(
              text === "2025-01-31T12:00:00"
                ? `"${text}" names no zone: add one (2025-01-31T12:00:00Z for UTC, 2025-01-31T13:00+01:00): without it, each host would read it in its own local time`
                : `"${text}" is not an ISO-8601 time: a date (2025-01-31) or a date and time with its zone (2025-01-31T12:00:00Z, 2025-01-31T13:00+01:00)`
            )
          }
        })
    )
  }
})
