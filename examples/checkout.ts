/**
 * A checkout as a saga: reserve inventory, charge the card, ship, and a wire transfer to the
 * supplier that no code may send without a human's approval.
 *
 * Run: npm run demo
 */
import { Console, Effect, Layer, Schema } from "effect"
import { Approval, Compensable, CompensationReport, Journal, Outcome, Saga, Timeline } from "effect-saga"

// --- a pretend outside world, with the idempotency keys real providers accept -------------------

const world = { stock: 10, balance: 0, shipped: [] as Array<string>, wired: 0, warehouseUp: true }
const reservations = new Map<string, string>() // idempotency key → reservation id

// --- the tools -----------------------------------------------------------------------------

const reserveInventory = Compensable.make({
  name: "reserveInventory",
  input: Schema.Struct({ sku: Schema.String, quantity: Schema.Int }),
  success: Schema.String, // the reservation id: what the undo needs
  execute: ({ quantity }, step) =>
    Effect.sync(() => {
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
    world.warehouseUp
      ? Effect.sync(() => {
          world.shipped.push(orderId)
          return `parcel-${orderId}`
        })
      : Effect.fail(Outcome.failed("the warehouse refused the order")),
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

// --- the demo --------------------------------------------------------------------------------

const showJournal = (sagaId: string) =>
  Effect.gen(function* () {
    const journal = yield* Journal.Journal
    yield* Console.log(Timeline.format(yield* journal.read(sagaId)))
  })

const demo = Effect.gen(function* () {
  yield* Console.log("== order-1: the wire transfer waits for a human ==")
  const first = yield* Saga.run("order-1", checkout("order-1"))
  yield* Console.log(`result: ${first._tag}`)
  if (first._tag === "AwaitingApproval") {
    const { request } = first
    yield* Console.log(`approving ${request.toolName} (input sha256 ${request.inputDigest.slice(0, 12)}…) as alice`)
    yield* Approval.approve(request.requestId, { by: "alice", inputDigest: request.inputDigest })
  }
  const second = yield* Saga.run("order-1", checkout("order-1"))
  yield* Console.log(`result after approval: ${second._tag}`)
  yield* showJournal("order-1")

  yield* Console.log("\n== order-2: the warehouse is down, so the saga undoes itself ==")
  world.warehouseUp = false
  const failed = yield* Saga.run("order-2", checkout("order-2"))
  yield* Console.log(`result: ${failed._tag}`)
  yield* showJournal("order-2")
  if (failed._tag === "Compensated" || failed._tag === "CompensationFailed") {
    yield* Console.log(`\n${CompensationReport.format(failed.report)}`)
  }
  yield* Console.log(`\nworld: ${JSON.stringify(world)}`)
})

const SagaLive = Saga.layer.pipe(Layer.provideMerge(Layer.merge(Journal.layerMemory, Approval.layerMemory)))

Effect.runPromise(Effect.provide(demo, SagaLive)).catch((error) => {
  console.error(error)
  process.exit(1)
})
