/**
 * A trip booked as a saga: the flight, the hotel and the car are booked at once, in three parallel
 * branches, and the card is charged when all three are confirmed.
 *
 * 1. trip-lisbon: every provider says yes, the card is charged: `Completed`.
 * 2. trip-porto: the car rental has no car left. The flight and the hotel, already booked, are
 *    undone in reverse order of completion (the flight answered last, so it is cancelled first),
 *    and the card is never charged: `Compensated`, with its report.
 *
 * The pretend providers answer in a fixed order (the hotel first, then the airline, then the car
 * rental), so every run prints the same lines.
 *
 * Run: npx tsx examples/travel.ts            journal in an SQLite file in a temporary directory
 *      npx tsx examples/travel.ts --memory   journal in memory
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Console, Effect, Layer, Schedule, Schema } from "effect"
import {
  Approval,
  Compensable,
  CompensationReport,
  Journal,
  Outcome,
  Saga,
  SagaResult,
  SqlStore,
  Timeline
} from "effect-saga"

// --- pretend providers: what is booked, by reference ----------------------------------------------

const live = new Set<string>() // references of the bookings and charges that stand
const noCarLeftIn = new Set(["Porto"])
let charged = 0 // in cents

/**
 * Real providers answer when they answer. These answer in a fixed order once all three calls are
 * under way: the hotel first, then the airline, then the car rental, each once the answer before it
 * is in the journal. So every run journals the same order of completion and prints the same lines.
 */
const answerOrder = ["bookHotel", "bookFlight", "rentCar"]

const waitForTurn = (step: Compensable.StepContext) => {
  const previous = answerOrder[answerOrder.indexOf(step.toolName) - 1]
  const myTurn = (entries: ReadonlyArray<Journal.Entry>) =>
    answerOrder.every((tool) => entries.some((e) => e.toolName === tool)) &&
    (previous === undefined || entries.some((e) => e.toolName === previous && e.phase !== "INTENT"))
  return Effect.flatMap(Journal.Journal, (journal) => journal.read(step.sagaId)).pipe(
    Effect.repeat({ schedule: Schedule.spaced("2 millis"), until: myTurn }),
    Effect.orDie,
    Effect.asVoid
  )
}

/** A provider that applies each idempotency key once. */
const provider = () => {
  const byKey = new Map<string, string>()
  return {
    /** Books `reference`, or refuses with `refusal` (then nothing is booked: `Outcome.Failed`). */
    book: (step: Compensable.StepContext, reference: string, refusal?: string) =>
      Effect.zipRight(
        waitForTurn(step),
        Effect.suspend(() => {
          if (refusal !== undefined) return Effect.fail(Outcome.failed(refusal))
          const known = byKey.get(step.idempotencyKey) // a replay of the key books nothing new
          if (known !== undefined) return Effect.succeed(known)
          byKey.set(step.idempotencyKey, reference)
          live.add(reference)
          return Effect.succeed(reference)
        })
      ),
    cancel: (reference: string) => Effect.sync(() => live.delete(reference))
  }
}

const Airline = provider()
const Hotels = provider()
const CarRental = provider()

// --- the tools ------------------------------------------------------------------------------------

const bookFlight = Compensable.make({
  name: "bookFlight",
  input: Schema.Struct({ to: Schema.String, date: Schema.String }),
  success: Schema.String, // the booking reference: what the cancellation needs
  execute: ({ date, to }, step) => Airline.book(step, `flight-${to}-${date}`),
  compensate: ({ result }) => Airline.cancel(result)
})

const bookHotel = Compensable.make({
  name: "bookHotel",
  input: Schema.Struct({ city: Schema.String, date: Schema.String, nights: Schema.Int }),
  success: Schema.String,
  execute: ({ city, date, nights }, step) => Hotels.book(step, `hotel-${city}-${date}-${nights}n`),
  compensate: ({ result }) => Hotels.cancel(result)
})

const rentCar = Compensable.make({
  name: "rentCar",
  input: Schema.Struct({ city: Schema.String, date: Schema.String, days: Schema.Int }),
  success: Schema.String,
  execute: ({ city, date, days }, step) =>
    CarRental.book(step, `car-${city}-${date}-${days}d`, noCarLeftIn.has(city) ? `no car left in ${city}` : undefined),
  compensate: ({ result }) => CarRental.cancel(result)
})

const chargeCard = Compensable.make({
  name: "chargeCard",
  input: Schema.Struct({ amount: Schema.Int }),
  success: Schema.String,
  execute: ({ amount }, step) =>
    Effect.sync(() => {
      charged += amount
      live.add(`charge-${step.sagaId}`)
      return `charge-${step.sagaId}`
    }),
  compensate: ({ input, result }) =>
    Effect.sync(() => {
      charged -= input.amount // a refund
      live.delete(result)
    })
})

// --- the saga: three bookings in parallel, then the payment --------------------------------------

interface Trip {
  readonly city: string
  readonly date: string
  readonly nights: number
}

const bookTrip = (trip: Trip) =>
  Effect.gen(function* () {
    const bookings = yield* Effect.all(
      {
        flight: bookFlight({ to: trip.city, date: trip.date }),
        hotel: bookHotel({ city: trip.city, date: trip.date, nights: trip.nights }),
        car: rentCar({ city: trip.city, date: trip.date, days: trip.nights })
      },
      { concurrency: "unbounded" }
    )
    const payment = yield* chargeCard({ amount: 120_00 * trip.nights })
    return { ...bookings, payment }
  })

// --- where the journal lives ------------------------------------------------------------------------

const inMemory = process.argv.includes("--memory")
const directory = inMemory ? undefined : fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-travel-"))
const Store = inMemory
  ? Layer.merge(Journal.layerMemory, Approval.layerMemory)
  : SqlStore.layerSqlite({ filename: path.join(directory!, "trips.db") })
const SagaLive = Saga.layer.pipe(Layer.provideMerge(Store))

// --- the demo ---------------------------------------------------------------------------------------

/** A journal without its timestamps, so that every run prints the same lines. */
const journalOf = (sagaId: string) =>
  Effect.gen(function* () {
    const journal = yield* Journal.Journal
    const entries = yield* journal.read(sagaId)
    return entries.map((e) =>
      `  ${String(e.seq).padStart(2)}  ${(e.toolName ?? "").padEnd(10)}  ${e.phase.padEnd(17)}  ${Timeline.detailOf(e)}`.trimEnd()
    )
  })

const book = (sagaId: string, trip: Trip) =>
  Effect.gen(function* () {
    yield* Console.log(`\n== ${sagaId}: ${trip.city} on ${trip.date}, ${trip.nights} nights ==`)
    const result = yield* Saga.run(sagaId, bookTrip(trip))
    yield* Console.log(
      SagaResult.match(result, {
        Completed: ({ value }) => `Completed: ${value.flight}, ${value.hotel}, ${value.car}, ${value.payment}`,
        Compensated: ({ report }) => `Compensated\n${CompensationReport.format(report)}`,
        CompensationFailed: ({ report }) => `CompensationFailed: page a human\n${CompensationReport.format(report)}`,
        AwaitingApproval: ({ request }) => `AwaitingApproval: ${request.toolName}`,
        NeedsAttention: ({ unknown }) => `NeedsAttention: ${unknown.map((step) => step.stepId).join(", ")}`,
        Suspended: () => "Suspended"
      })
    )
    yield* Console.log("journal (seq, tool, phase, detail):")
    yield* Console.log((yield* journalOf(sagaId)).join("\n"))
    return result
  })

/** Undos ran over the steps journaled `EXECUTED`, in the reverse of the order they were journaled. */
const undoneInReverseCompletionOrder = (sagaId: string) =>
  Effect.gen(function* () {
    const entries = yield* Effect.flatMap(Journal.Journal, (journal) => journal.read(sagaId))
    const stepsIn = (phase: Journal.Phase) => entries.filter((e) => e.phase === phase).map((e) => e.stepId)
    return JSON.stringify(stepsIn("COMPENSATED")) === JSON.stringify(stepsIn("EXECUTED").reverse())
  })

const main = Effect.gen(function* () {
  yield* Console.log(inMemory ? "journal: in memory" : "journal: an SQLite file in a temporary directory")

  const lisbon = yield* book("trip-lisbon", { city: "Lisbon", date: "2025-06-01", nights: 3 })
  const porto = yield* book("trip-porto", { city: "Porto", date: "2025-07-01", nights: 2 })

  const ordered = yield* undoneInReverseCompletionOrder("trip-porto")
  yield* Console.log(`\nstill booked: ${[...live].sort().join(", ")}`)
  yield* Console.log(`charged: ${(charged / 100).toFixed(2)}`)
  yield* Console.log(`trip-porto undone in reverse completion order: ${ordered}`)

  const leftInPorto = [...live].filter((reference) => reference.includes("Porto"))
  if (lisbon._tag !== "Completed" || porto._tag !== "Compensated" || leftInPorto.length > 0 || !ordered) {
    return yield* Effect.dieMessage("the trips did not end as this example says they do")
  }
}).pipe(Effect.provide(SagaLive))

Effect.runPromise(main)
  .catch((error) => {
    console.error(error)
    process.exitCode = 1
  })
  .finally(() => {
    if (directory !== undefined) fs.rmSync(directory, { recursive: true, force: true })
  })
