/**
 * A checkout as a saga, journaled in an SQLite file: reserve inventory, charge the card, ship, and
 * a wire transfer to the supplier that no code may send without a human's approval.
 *
 * Every stage below opens the file anew, as a separate process would (the shop, an operator's
 * console, the shop after a restart): what carries over from one stage to the next is in the file.
 *
 * Run: npm run demo                journal in ./checkout-demo.db, a fresh file every run
 *      npm run demo -- --memory    journal in memory, shared by the stages
 */
import * as fs from "node:fs"
import { Console, Effect, Layer, Schema } from "effect"
import { Approval, Compensable, CompensationReport, Journal, Outcome, Saga, SqlStore, Timeline } from "effect-saga"

// --- a pretend outside world, with the idempotency keys real providers accept -------------------

const world = { stock: 10, balance: 0, shipped: [] as Array<string>, wired: 0, warehouseUp: true }
const reservations = new Map<string, string>() // idempotency key → reservation id

/** How many times each tool's `execute` really ran, to see what a resume does not run again. */
const calls = { reserveInventory: 0, chargeCard: 0, ship: 0, sendWireTransfer: 0 }

// --- the tools -----------------------------------------------------------------------------

const reserveInventory = Compensable.make({
  name: "reserveInventory",
  input: Schema.Struct({ sku: Schema.String, quantity: Schema.Int }),
  success: Schema.String, // the reservation id: what the undo needs
  execute: ({ quantity }, step) =>
    Effect.sync(() => {
      calls.reserveInventory++
      const known = reservations.get(step.idempotencyKey) // a replay with the same key is a no-op
      if (known !== undefined) return known
      world.stock -= quantity
      const id = `res-${reservations.size + 1}`
      reservations.set(step.idempotencyKey, id)
      return id
    }),
  compensate: ({ input }) =>
    Effect.sync(() => {
      world.stock += input.quantity
    })
})

const chargeCard = Compensable.make({
  name: "chargeCard",
  input: Schema.Struct({ amount: Schema.Int }),
  success: Schema.Struct({ chargeId: Schema.String }),
  execute: ({ amount }) =>
    Effect.sync(() => {
      calls.chargeCard++
      world.balance += amount
      return { chargeId: `ch-${amount}` }
    }),
  compensate: ({ input }) =>
    Effect.sync(() => {
      world.balance -= input.amount // a refund: a correction, not an erasure
    })
})

const ship = Compensable.make({
  name: "ship",
  input: Schema.Struct({ orderId: Schema.String }),
  success: Schema.String,
  execute: ({ orderId }) =>
    Effect.suspend(() => {
      calls.ship++
      if (!world.warehouseUp) return Effect.fail(Outcome.failed("the warehouse refused the order"))
      world.shipped.push(orderId)
      return Effect.succeed(`parcel-${orderId}`)
    }),
  compensate: ({ input }) =>
    Effect.sync(() => {
      world.shipped = world.shipped.filter((id) => id !== input.orderId)
    })
})

const sendWireTransfer = Compensable.make({
  name: "sendWireTransfer",
  input: Schema.Struct({ amount: Schema.Int, to: Schema.String }),
  success: Schema.String,
  reversibility: "irreversible", // no undo exists: the saga waits for a human first
  execute: ({ amount }) =>
    Effect.sync(() => {
      calls.sendWireTransfer++
      world.wired += amount
      return `wire-${amount}`
    })
})

const checkout = (orderId: string) =>
  Effect.gen(function* () {
    const reservation = yield* reserveInventory({ sku: "A-1", quantity: 2 })
    const charge = yield* chargeCard({ amount: 4200 })
    const parcel = yield* ship({ orderId })
    yield* sendWireTransfer({ amount: 4200, to: "DE89 3704 0044 0532 0130 00" })
    return { reservation, charge, parcel }
  })

// --- where the journal lives ------------------------------------------------------------------

const inMemory = process.argv.includes("--memory")
const filename = "checkout-demo.db"

/** Saga over a journal and approvals: on one SQLite file (and one connection), or in memory. */
const openStore = inMemory
  ? // One in-memory store, built once and shared by every stage: nothing would survive a rebuild.
    Layer.memoize(Saga.layer.pipe(Layer.provideMerge(Layer.merge(Journal.layerMemory, Approval.layerMemory))))
  : Effect.sync(() => {
      for (const file of [filename, `${filename}-wal`, `${filename}-shm`]) fs.rmSync(file, { force: true })
      // Built again by every stage that uses it: a fresh connection to the file each time.
      return Saga.layer.pipe(Layer.provideMerge(SqlStore.layerSqlite({ filename })))
    })

// --- the demo --------------------------------------------------------------------------------

/** Runs `effect`, then says which tools' `execute` ran meanwhile and how often each has run in all. */
const showingCalls = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const before = { ...calls }
    const result = yield* effect
    const ran = Object.entries(calls).filter(([tool, count]) => count > before[tool as keyof typeof calls])
    const total = Object.entries(calls).map(([tool, count]) => `${tool} ${count}`)
    yield* Console.log(`tools run now: ${ran.map(([tool]) => tool).join(", ") || "none"}`)
    yield* Console.log(`tools run in all: ${total.join(", ")}`)
    return result
  })

const demo = Effect.gen(function* () {
  const store = yield* openStore
  const stage = <A, E>(title: string, effect: Effect.Effect<A, E, Saga.Saga | Journal.Journal | Approval.Approval>) =>
    Effect.zipRight(Console.log(`\n== ${title} ==`), Effect.provide(effect, store))

  yield* Console.log(
    inMemory ? "journal: in memory" : `journal: ${filename} (SQLite, created afresh; --memory to keep it in memory)`
  )

  yield* stage(
    "order-1 runs: the wire transfer waits for a human",
    Effect.gen(function* () {
      const result = yield* showingCalls(Saga.run("order-1", checkout("order-1")))
      yield* Console.log(`result: ${result._tag}`)
    })
  )

  yield* stage(
    "an operator, in a session of their own, approves what waits",
    Effect.gen(function* () {
      for (const request of yield* Approval.pending) {
        // What the operator sees: the exact input, and the saga's position (refused if it moves on meanwhile).
        const seen = yield* Saga.status(request.sagaId)
        yield* Console.log(
          `pending: ${request.sagaId} ${request.toolName} ${request.input} (revision ${seen.revision})`
        )
        yield* Saga.approve(request.sagaId, request.stepId, {
          by: "alice",
          revision: seen.revision,
          digest: seen.digest
        })
        yield* Console.log(`approved by alice (input sha256 ${request.inputDigest.slice(0, 12)}…), journaled APPROVED`)
      }
    })
  )

  yield* stage(
    "order-1 runs again: the same saga id resumes; steps already journaled do not run again",
    Effect.gen(function* () {
      const result = yield* showingCalls(Saga.run("order-1", checkout("order-1")))
      yield* Console.log(`result: ${result._tag} ${result._tag === "Completed" ? JSON.stringify(result.value) : ""}`)
    })
  )

  yield* stage(
    "order-1 once more: it is finished, so nothing runs and nothing is written",
    Effect.gen(function* () {
      const before = yield* Saga.status("order-1")
      const result = yield* showingCalls(Saga.run("order-1", checkout("order-1")))
      const after = yield* Saga.status("order-1")
      yield* Console.log(
        `result: ${result._tag}; the saga's revision before: ${before.revision}, after: ${after.revision}`
      )
    })
  )

  yield* stage(
    "order-2: the warehouse is down, so the saga undoes itself",
    Effect.gen(function* () {
      world.warehouseUp = false
      const result = yield* showingCalls(Saga.run("order-2", checkout("order-2")))
      yield* Console.log(`result: ${result._tag}`)
      if (result._tag === "Compensated" || result._tag === "CompensationFailed") {
        yield* Console.log(CompensationReport.format(result.report))
      }
    })
  )

  yield* stage(
    `what ${inMemory ? "the journal" : filename} holds, entry by entry`,
    Effect.gen(function* () {
      const journal = yield* Journal.Journal
      for (const saga of yield* journal.list()) {
        const verification = yield* Journal.verify(saga.sagaId)
        const chain =
          verification._tag === "Intact"
            ? `hash chain intact over ${verification.entries} entries`
            : `hash chain BROKEN at seq ${verification.seq}: ${verification.reason}`
        yield* Console.log(`\n${saga.sagaId}: ${saga.status}, revision ${saga.revision}; ${chain}`)
        yield* Console.log(Timeline.format(yield* journal.read(saga.sagaId)))
      }
    })
  )

  yield* Console.log(`\nworld: ${JSON.stringify(world)}`)
})

Effect.runPromise(Effect.scoped(demo)).catch((error) => {
  console.error(error)
  process.exit(1)
})
