/**
 * A user's agent on the installed tarball: `effect-saga/ai` (an `@effect/ai` toolkit whose calls
 * are steps) on `effect-saga/postgres` (the store at EFFECT_SAGA_PG_URL). The trip is cancelled
 * after a seat is held, so the hold is released; it prints the saga's id and one line
 * `.ci/consumer` checks.
 */
import * as Crypto from "node:crypto"
import * as Tool from "@effect/ai/Tool"
import * as Toolkit from "@effect/ai/Toolkit"
import { Console, Effect, Layer, Schema } from "effect"
import { Outcome, Saga } from "effect-saga"
import * as Agent from "effect-saga/ai"
import * as Postgres from "effect-saga/postgres"

const url = process.env.EFFECT_SAGA_PG_URL
if (url === undefined) throw new Error("EFFECT_SAGA_PG_URL names no PostgreSQL server")

const released: Array<string> = []

const HoldSeat = Tool.make("HoldSeat", {
  parameters: { flight: Schema.String },
  success: Schema.Struct({ holdId: Schema.String })
}).annotate(Tool.Idempotent, true)

const Travel = Agent.make(Toolkit.make(HoldSeat), {
  undo: { HoldSeat: (ctx) => Effect.sync(() => released.push(ctx.result.holdId)) }
})

const Handlers = Travel.toLayer({ HoldSeat: ({ flight }) => Effect.succeed({ holdId: `hold-${flight}` }) })

const trip = Effect.gen(function* () {
  const toolkit = yield* Travel.toolkit
  yield* toolkit.handle("HoldSeat", { flight: "TP1234" })
  return yield* Effect.fail(Outcome.failed("the trip is cancelled"))
})

const Live = Handlers.pipe(Layer.provideMerge(Saga.layer), Layer.provide(Postgres.layer({ url })))

const sagaId = `trip-${Crypto.randomUUID()}`

const main = Saga.run(sagaId, trip).pipe(
  Effect.flatMap((result) => Console.log(`${sagaId} postgres: ${result._tag}, released: ${released.join(" ")}`)),
  Effect.provide(Live)
)

Effect.runPromise(main).catch((error) => {
  console.error(error)
  process.exit(1)
})
