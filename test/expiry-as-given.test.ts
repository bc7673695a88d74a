/**
 * An approval's expiry already past is refused quoting it as the operator gave it, on the CLI and
 * the HTTP API as in process (`Saga.approve`), while an expiry that holds is journaled as the
 * journal writes times (UTC, milliseconds, `Z`).
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { Journal, Saga } from "../src/index.js"
import { cliInProcess as cli } from "./fixtures/cli-in-process.js"
import { Checkout } from "./fixtures/cli-tools.js"
import { awaiting, clientAs, freshDb, onDb, payout, serveOn } from "./fixtures/http-saga.js"
import { snapshot } from "./fixtures/sqlite-raw.js"
import { onFile } from "./fixtures/worker-on-file.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-expiry-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const past = (given: string) => `expiresAt "${given}" is already past: the approval would never hold`

/** The `expiresAt` of the last `APPROVED` entry of `sagaId`. */
const journaledExpiry = (sagaId: string) =>
  Effect.map(
    Effect.flatMap(Journal.Journal, (journal) => journal.read(sagaId)),
    (entries) => {
      const approved = entries.filter((entry) => entry.phase === "APPROVED").at(-1)
      return approved === undefined ? undefined : JSON.parse(approved.payload!).expiresAt
    }
  )

describe("the CLI quotes a past --expires-at as typed", { timeout: 60_000 }, () => {
  it.scoped("approve and renew-approval refuse it (exit 2, nothing written); a later one is journaled in UTC", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(Date.parse("2026-12-05T08:00:00Z"))
      const db = path.join(dir, "cli.db")
      yield* onFile(db, Saga.start(Checkout, "x-1", { orderId: "x-1", amount: 4200 }))
      const wire = (yield* onFile(db, Saga.status("x-1"))).steps.find((step) => step.state === "awaiting_approval")!
      const before = snapshot(db)
      const refused = yield* cli(
        "approve",
        "x-1",
        wire.stepId,
        "--as",
        "alice",
        "--expires-at",
        "2021-01-01T00:00:00Z",
        "--db",
        db
      )
      expect(refused.code).toBe(2)
      expect(refused.stderr).toContain(past("2021-01-01T00:00:00Z"))
      expect(snapshot(db)).toEqual(before)

      const approved = yield* cli(
        "approve",
        "x-1",
        wire.stepId,
        "--as",
        "alice",
        "--expires-at",
        "2027-01-01T01:00+01:00",
        "--db",
        db
      )
      expect(approved.code).toBe(0)
      expect(approved.stdout).toContain("until 2027-01-01T00:00:00.000Z")
      expect(yield* onFile(db, journaledExpiry("x-1"))).toBe("2027-01-01T00:00:00.000Z")

      const renewed = snapshot(db)
      const stale = yield* cli(
        "renew-approval",
        "x-1",
        wire.stepId,
        "--as",
        "bob",
        "--expires-at",
        "2026-12-05",
        "--db",
        db
      )
      expect(stale.code).toBe(2)
      expect(stale.stderr).toContain(past("2026-12-05"))
      expect(snapshot(db)).toEqual(renewed)
    })
  )
})

describe("the HTTP API quotes a past expiresAt as sent", { timeout: 30_000 }, () => {
  it.scopedLive("approve and renew refuse it (Refused, nothing written); a later one is journaled in UTC", () =>
    Effect.gen(function* () {
      const db = freshDb("expiry")
      yield* onDb(db, Saga.run("payout-1", payout))
      const baseUrl = yield* serveOn(db)
      const api = yield* clientAs(baseUrl, "alice")
      const first = yield* awaiting(baseUrl, "payout-1")
      const path = { sagaId: "payout-1", stepId: first.stepId }
      const seen = { revision: first.revision, digest: first.digest }
      const before = snapshot(db)
      const refused = yield* Effect.flip(
        api.approvals.approve({ path, payload: { ...seen, expiresAt: "2021-01-01T00:00:00Z" } })
      )
      expect(refused).toMatchObject({ _tag: "Refused", message: expect.stringContaining(past("2021-01-01T00:00:00Z")) })
      expect(snapshot(db)).toEqual(before)

      const approved = yield* api.approvals.approve({ path, payload: { ...seen, expiresAt: "2999-01-01T01:00+01:00" } })
      expect(approved.changed).toBe(true)
      expect(yield* onDb(db, journaledExpiry("payout-1"))).toBe("2999-01-01T00:00:00.000Z")

      const after = snapshot(db)
      const stale = yield* Effect.flip(
        api.approvals.renew({
          path,
          payload: { revision: approved.revision, digest: approved.digest, expiresAt: "2021-01-01" }
        })
      )
      expect(stale).toMatchObject({ _tag: "Refused", message: expect.stringContaining(past("2021-01-01")) })
      expect(snapshot(db)).toEqual(after)
    })
  )
})
