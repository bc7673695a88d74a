/** The README's quick start, compiled and run in CI. */
import { Effect, Layer, Schema } from "effect"
import { Approval, Compensable, Journal, Saga } from "effect-saga"

const reserve = Compensable.make({
  name: "reserveInventory",
  input: Schema.Struct({ sku: Schema.String, quantity: Schema.Int }),
  success: Schema.String, // the reservation id: return the handle the undo needs, not "ok"
  execute: ({ sku, quantity }, step) => Inventory.reserve(sku, quantity, step.idempotencyKey),
  compensate: (ctx) => Inventory.release(ctx.result, ctx.idempotencyKey)
})

const charge = Compensable.make({
  name: "chargeCard",
  input: Schema.Struct({ amount: Schema.Int }),
  success: Schema.String,
  execute: ({ amount }, step) => Payments.charge(amount, step.idempotencyKey),
  compensate: (ctx) => Payments.refund(ctx.result, ctx.idempotencyKey)
})

const checkout = Effect.gen(function* () {
  const reservation = yield* reserve({ sku: "A-1", quantity: 2 })
  const chargeId = yield* charge({ amount: 4200 })
  return { reservation, chargeId }
})

const SagaLive = Saga.layer.pipe(Layer.provide(Layer.merge(Journal.layerMemory, Approval.layerMemory)))
// Durable, shared by local processes: Saga.layer.pipe(Layer.provide(SqlStore.layerSqlite({ filename })))

// Completed | Compensated | CompensationFailed | AwaitingApproval | NeedsAttention | Suspended
const result = Saga.run("order-123", checkout).pipe(Effect.provide(SagaLive))

// --- stand-ins for your own services (the README shows the code above this line) ---
const Inventory = {
  reserve: (sku: string, quantity: number, key: string) => Effect.succeed(`res-${sku}-${quantity}-${key.length}`),
  release: (_reservation: string, _key: string) => Effect.void
}
const Payments = {
  charge: (amount: number, key: string) => Effect.succeed(`ch-${amount}-${key.length}`),
  refund: (_chargeId: string, _key: string) => Effect.void
}

Effect.runPromise(result).then((outcome) => console.log(outcome._tag))
