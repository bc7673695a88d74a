// Creates a reservation, once per idempotency key: a retry after an unknown outcome answers the same one.
import { serve } from "effect-saga/handler"
import { authorized, read, write } from "./reservations.mjs"

await serve(({ input, effect }) => {
  if (!authorized()) return { outcome: "failed", message: "the provider refused the token" }
  const reservations = read()
  const existing = Object.entries(reservations).find(([, r]) => r.idempotencyKey === effect.idempotencyKey)
  if (existing !== undefined) {
    return { outcome: "applied", result: { reservationId: existing[0] }, receipt: existing[1].token }
  }
  const reservationId = `res-${Object.keys(reservations).length + 1}`
  const token = `release-token-${Math.random().toString(36).slice(2)}`
  reservations[reservationId] = { ...input, status: "held", token, idempotencyKey: effect.idempotencyKey }
  write(reservations)
  // The token is the receipt: journaled as control data, handed to the inverse, never logged.
  return { outcome: "applied", result: { reservationId }, receipt: token }
})
