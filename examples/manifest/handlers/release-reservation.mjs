// Releases a reservation: the inverse of createReservation, called with `operation: "compensate"`
// and the original receipt (the provider's release token) as control data.
import { serve } from "effect-saga/handler"
import { authorized, read, write } from "./reservations.mjs"

await serve(({ input, compensation }) => {
  if (!authorized()) return { outcome: "failed", message: "the provider refused the token" }
  const reservations = read()
  const reservation = reservations[input.reservationId]
  if (reservation === undefined) return { outcome: "failed", message: "no such reservation" }
  if (reservation.token !== compensation?.originalReceipt) return { outcome: "failed", message: "wrong release token" }
  reservation.status = "released"
  write(reservations)
  return { outcome: "applied", result: null, compensation: "completed" }
})
