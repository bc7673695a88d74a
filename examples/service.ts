/**
 * A service that runs sagas for its whole lifetime in a scoped Layer, on an SQLite file.
 *
 * 1. The service starts three bookings. One of them is still waiting on the hotel when the
 *    service shuts down: it is interrupted, journaled `SAGA_SUSPENDED`, and nothing is undone.
 * 2. The service starts again under the same worker name. `Recovery.layer` finds the suspended
 *    booking at start-up and resumes it from the journal: the steps that ran do not run again.
 *
 * Run: npx tsx examples/service.ts
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Console, Deferred, Effect, Layer, Schema } from "effect"
import { Compensable, Recovery, Saga, SagaDefinition, SqlStore } from "effect-saga"

// --- a pretend provider that applies each idempotency key once ---------------------------------

const booked = new Map<string, string>() // idempotency key → booking reference
const calls = { bookFlight: 0, bookHotel: 0 }
const hotelAnswered = Effect.runSync(Deferred.make<void>())
let hotelIsSlow = true

const book = (name: "bookFlight" | "bookHotel") =>
  Compensable.make({
    name,
    input: Schema.String,
    success: Schema.String,
    retryMode: "idempotency-key", // the provider accepts a replay of the key: safe to retry after a crash
    execute: (trip, step) =>
      Effect.gen(function* () {
        calls[name]++
        if (name === "bookHotel" && trip === "lisbon" && hotelIsSlow) yield* Deferred.await(hotelAnswered)
        const reference = booked.get(step.idempotencyKey) ?? `${name}-${trip}`
        booked.set(step.idempotencyKey, reference)
        return reference
      }),
    compensate: ({ idempotencyKey }) => Effect.sync(() => booked.delete(idempotencyKey))
  })

const bookFlight = book("bookFlight")
const bookHotel = book("bookHotel")

// --- the saga, defined by name so that another process can resume it -------------------------

const Trip = SagaDefinition.make("trip", {
  input: Schema.Struct({ city: Schema.String }),
  program: ({ city }) =>
    Effect.gen(function* () {
      const flight = yield* bookFlight(city)
      const hotel = yield* bookHotel(city)
      return { flight, hotel }
    })
})

// --- the service ------------------------------------------------------------------------------

const filename = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-service-")), "trips.db")
const Store = SqlStore.layerSqlite({ filename })
// A stable worker name: a restarted service takes its own sagas back at once.
const Worker = Saga.layerWith({ owner: "trips-1", leaseTtl: "30 seconds" }).pipe(Layer.provideMerge(Store))
const Service = Recovery.layer({ definitions: [Trip], every: "startup" }).pipe(Layer.provideMerge(Worker))

const statuses = Effect.flatMap(Saga.list(), (sagas) =>
  Console.log(sagas.map((saga) => `  ${saga.sagaId}: ${saga.status}`).join("\n"))
)

const firstLife = Effect.gen(function* () {
  yield* Console.log("1. the service books three trips; the hotel in Lisbon is slow to answer")
  for (const city of ["porto", "madrid"]) {
    const result = yield* Saga.start(Trip, `trip-${city}`, { city })
    yield* Console.log(`  trip-${city}: ${result._tag}`)
  }
  yield* Effect.fork(Saga.start(Trip, "trip-lisbon", { city: "lisbon" }))
  yield* Effect.repeat(
    Effect.sync(() => calls.bookHotel),
    { until: (n) => n >= 3 }
  )
  yield* Console.log("  the service shuts down while trip-lisbon waits on the hotel")
}).pipe(Effect.provide(Worker))

const secondLife = Effect.gen(function* () {
  yield* Console.log("2. the service starts again: Recovery resumes what the first life left behind")
  hotelIsSlow = false
  yield* Deferred.succeed(hotelAnswered, undefined)
  const done = yield* Effect.repeat(Effect.delay(Saga.status("trip-lisbon"), "10 millis"), {
    until: (status) => status.status === "completed"
  }).pipe(Effect.timeout("10 seconds"))
  yield* Console.log(`  trip-lisbon: ${done.status}, lease ${done.lease === null ? "dropped" : "held"}`)
  yield* statuses
  yield* Console.log(
    `  calls: bookFlight ${calls.bookFlight}, bookHotel ${calls.bookHotel} (Lisbon's hotel asked twice, booked once)`
  )
}).pipe(Effect.provide(Service))

const main = Effect.gen(function* () {
  yield* firstLife
  yield* Console.log("  after the shutdown:")
  yield* statuses.pipe(Effect.provide(Worker))
  yield* secondLife
  if (calls.bookFlight !== 3 || booked.size !== 6) return yield* Effect.dieMessage("a step ran twice or not at all")
})

Effect.runPromise(main)
  .catch((error) => {
    console.error(error)
    process.exitCode = 1
  })
  .finally(() => fs.rmSync(path.dirname(filename), { recursive: true, force: true }))
