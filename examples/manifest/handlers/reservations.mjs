// A stand-in for a reservation provider's API: a JSON file (RESERVATIONS_FILE, passed through by the
// binding's `env:RESERVATIONS_FILE` grant) that only a caller with the right token may change.
import * as fs from "node:fs"

const file = process.env.RESERVATIONS_FILE

export const authorized = () => process.env.RESERVATION_API_TOKEN === "demo-token"

export const read = () => (fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, "utf8")) : {})

export const write = (reservations) => fs.writeFileSync(file, JSON.stringify(reservations, null, 2))
