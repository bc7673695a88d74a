/**
 * A user's program on the installed tarball: `effect-saga` (an SQLite journal) and
 * `effect-saga/testing` (the in-memory layers). A declined card releases the seat reserved before
 * it, on both; it prints one line `.ci/consumer` checks.
 */

import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Console, Effect, Layer, Schema } from "effect"
import { Compensable, Outcome, Saga, type SagaResult, SqlStore } from "effect-saga"
import * as Testing from "effect-saga/testing"

const released: Array<string> = []

const reserveSeat = Compensable.make({
  name: "reserveSeat",
  input: Schema.Struct({ flight: Schema.String }),
  success: Schema.String,
  execute: ({ flight }) => Effect.succeed(`${flight}/12A`),
  compensate: ({ result }) => Effect.sync(() => released.push(result))
})

const chargeCard = Compensable.make({
  name: "chargeCard",
  input: Schema.Struct({ amount: Schema.Int }),
  success: Schema.String,
  execute: ({ amount }) => Effect.fail(Outcome.failed(`card declined for ${amount}`))
})

const booking = Effect.gen(function* () {
  const seat = yield* reserveSeat({ flight: "TP1234" })
  const charge = yield* chargeCard({ amount: 18000 })
  return { seat, charge }
})

// A helper over any run: SagaResult has two type parameters, the value and the failure.
const ending = <A, E>(result: SagaResult.SagaResult<A, E>): string => result._tag

const filename = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "consumer-core-")), "sagas.db")
const onSqlite = Saga.layer.pipe(Layer.provide(SqlStore.layerSqlite({ filename })))

const main = Effect.gen(function* () {
  const durable = yield* Saga.run("booking-1", booking).pipe(Effect.provide(onSqlite))
  const inMemory = yield* Saga.run("booking-1", booking).pipe(Effect.provide(Testing.layer))
  yield* Console.log(`sqlite: ${ending(durable)}, memory: ${ending(inMemory)}, released: ${released.join(" ")}`)
})

Effect.runPromise(main).catch((error) => {
  console.error(error)
  process.exit(1)
})
