import { expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { Compensable, Journal, Outcome, Saga } from "effect-saga"
import * as Testing from "effect-saga/testing"

const reserveSeat = Compensable.make({
  name: "reserveSeat",
  input: Schema.Struct({ flight: Schema.String }),
  success: Schema.String,
  execute: ({ flight }) => Effect.succeed(`${flight}/12A`),
  compensate: () => Effect.void
})

const chargeCard = Compensable.make({
  name: "chargeCard",
  input: Schema.Struct({ amount: Schema.Int }),
  success: Schema.String,
  execute: ({ amount }) => Effect.fail(Outcome.failed(`card declined for ${amount}`))
})

it.effect("a declined card compensates the seat reserved before it", () =>
  Effect.gen(function* () {
    const result = yield* Saga.run(
      "booking-1",
      Effect.zipRight(reserveSeat({ flight: "TP1234" }), chargeCard({ amount: 18000 }))
    )
    expect(result._tag).toBe("Compensated")
    const entries = yield* Effect.flatMap(Journal.Journal, (journal) => journal.read("booking-1"))
    expect(entries.map((entry) => entry.phase)).toContain("COMPENSATED")
  }).pipe(Effect.provide(Testing.layer))
)
