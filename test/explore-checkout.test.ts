/**
 * The test docs/testing.md shows in "Proving your saga survives crashes": the checkout of
 * examples/checkout.ts, its world behind a service, explored at every crash point.
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Schema } from "effect"
import { Compensable, SagaDefinition } from "../src/index.js"
import * as Testing from "../src/Testing.js"

// The outside world the tools act on, as a service: exploreCrashes builds it afresh per crash point.
class Shop extends Context.Tag("Shop")<
  Shop,
  {
    stock: number
    balance: number
    shipped: Array<string>
    wired: number
    readonly reservations: Map<string, string> // idempotency key → reservation id
  }
>() {}

const ShopLive = Layer.sync(Shop, () => ({ stock: 10, balance: 0, shipped: [], wired: 0, reservations: new Map() }))

const reserveInventory = Compensable.make({
  name: "reserveInventory",
  input: Schema.Struct({ sku: Schema.String, quantity: Schema.Int }),
  success: Schema.String,
  retryMode: "idempotency-key", // a replay of the key reserves nothing new
  execute: ({ quantity }, step) =>
    Effect.map(Shop, (shop) => {
      const known = shop.reservations.get(step.idempotencyKey)
      if (known !== undefined) return known
      shop.stock -= quantity
      const id = `res-${shop.reservations.size + 1}`
      shop.reservations.set(step.idempotencyKey, id)
      return id
    }),
  compensate: ({ input }) =>
    Effect.map(Shop, (shop) => {
      shop.stock += input.quantity
    })
})

const chargeCard = Compensable.make({
  name: "chargeCard",
  input: Schema.Struct({ amount: Schema.Int }),
  success: Schema.Struct({ chargeId: Schema.String }),
  execute: ({ amount }) =>
    Effect.map(Shop, (shop) => {
      shop.balance += amount
      return { chargeId: `ch-${amount}` }
    }),
  compensate: ({ input }) =>
    Effect.map(Shop, (shop) => {
      shop.balance -= input.amount
    })
})

const ship = Compensable.make({
  name: "ship",
  input: Schema.Struct({ orderId: Schema.String }),
  success: Schema.String,
  execute: ({ orderId }) =>
    Effect.map(Shop, (shop) => {
      shop.shipped.push(orderId)
      return `parcel-${orderId}`
    }),
  compensate: ({ input }) =>
    Effect.map(Shop, (shop) => {
      shop.shipped = shop.shipped.filter((id) => id !== input.orderId)
    })
})

const sendWireTransfer = Compensable.make({
  name: "sendWireTransfer",
  input: Schema.Struct({ amount: Schema.Int, to: Schema.String }),
  success: Schema.String,
  reversibility: "irreversible", // waits for an approval
  execute: ({ amount }) =>
    Effect.map(Shop, (shop) => {
      shop.wired += amount
      return `wire-${amount}`
    })
})

const Checkout = SagaDefinition.make("checkout", {
  input: Schema.Struct({ orderId: Schema.String }),
  program: ({ orderId }) =>
    Effect.gen(function* () {
      const reservation = yield* reserveInventory({ sku: "A-1", quantity: 2 })
      const charge = yield* chargeCard({ amount: 4200 })
      const parcel = yield* ship({ orderId })
      yield* sendWireTransfer({ amount: 4200, to: "DE89 3704 0044 0532 0130 00" })
      return { reservation, charge, parcel }
    })
})

// What must hold in the world once the order ended, whatever the crash.
const settled: Testing.Invariant<Shop> = {
  name: "a completed order is paid, shipped and wired once; a compensated one left nothing behind",
  holds: (ending) =>
    Effect.map(Shop, (shop) => {
      switch (ending) {
        case "Completed":
          return shop.stock === 8 && shop.balance === 4200 && shop.shipped.length === 1 && shop.wired === 4200
        case "Compensated":
          return shop.stock === 10 && shop.balance === 0 && shop.shipped.length === 0 && shop.wired === 0
        default: // CompensationFailed: an undo a crash hid is for a human to check
          return shop.wired === 0
      }
    })
}

describe("the checkout survives a crash at every point", () => {
  it.effect(
    "approved, rejected or let expire, in memory",
    () =>
      Effect.gen(function* () {
        const summary = yield* Testing.exploreCrashes(
          Checkout,
          { orderId: "order-1" },
          {
            world: ShopLive,
            invariants: [settled],
            approvals: ["approve", "reject", "expire"]
          }
        )
        expect(summary.points).toBe(summary.found + 3) // every point, and the uncrashed run of each answer
        expect(summary.endings.Completed).toBeGreaterThan(0)
        expect(summary.endings.Compensated).toBeGreaterThan(0)
        expect(summary.calls.chargeCard?.compensate).toBeGreaterThan(0)
      }),
    120_000
  )

  it.effect(
    "on an SQLite file per crash point",
    () =>
      Effect.gen(function* () {
        const summary = yield* Testing.exploreCrashes(
          Checkout,
          { orderId: "order-1" },
          {
            world: ShopLive,
            invariants: [settled],
            store: "sqlite"
          }
        )
        expect(summary.recoveries).toBe(summary.found)
      }),
    120_000
  )
})
