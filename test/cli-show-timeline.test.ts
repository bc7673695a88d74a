/**
 * `effect-saga show`'s journal table reads each entry with the saga's steps and its other entries:
 * built once (maps by step), not searched again for every entry, with the same outcome column.
 * A saga with a call retried after an unknown outcome, an approval given, renewed and lapsed, a
 * step that failed and the compensation it started shows as it did when each entry scanned them all.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect, Schema, TestClock } from "effect"
import { Compensable, Outcome, Saga } from "../src/index.js"
import { cliInProcess } from "./fixtures/cli-in-process.js"
import { chargeCard, reserveInventory, sendWireTransfer, ship } from "./fixtures/cli-tools.js"
import { onFile } from "./fixtures/worker-on-file.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-cli-timeline-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

let calls = 0
/** Its first call has an unknown outcome; a resume calls it again with the same key. */
const notify = Compensable.make({
  name: "notify",
  input: Schema.String,
  success: Schema.String,
  retryMode: "idempotency-key",
  execute: (to) => (++calls === 1 ? Effect.fail(Outcome.unknown("the mailer did not answer")) : Effect.succeed(to)),
  compensate: () => Effect.void
})

const order = Effect.gen(function* () {
  yield* reserveInventory({ sku: "A-1", quantity: 2 })
  yield* notify("alice")
  yield* chargeCard({ amount: 4200 })
  yield* sendWireTransfer({ amount: 4200, to: "acme" })
  yield* ship({ orderId: "m-1-down" })
})

/** The journal table as `show` printed it when each entry scanned all steps and entries. */
const expected = `seq  time                      step                                 tool              phase                   outcome
1    1970-01-01T00:00:00.000Z                                                         SAGA_STARTED
2    1970-01-01T00:00:00.000Z  reserveInventory:be53a4d2deafda9b#1  reserveInventory  INTENT
3    1970-01-01T00:00:00.000Z  reserveInventory:be53a4d2deafda9b#1  reserveInventory  EXECUTED                result "res-A-1"
4    1970-01-01T00:00:00.000Z  notify:0a50500b2a3435fe#1            notify            INTENT                  no outcome journaled: run again at seq 7
5    1970-01-01T00:00:00.000Z                                                         SAGA_NEEDS_ATTENTION    stopped on notify (notify:0a50500b2a3435fe#1): outcome unknown: the mailer did not answer
6    1970-01-01T00:00:00.000Z                                                         SAGA_RESUMED
7    1970-01-01T00:00:00.000Z  notify:0a50500b2a3435fe#1            notify            INTENT
8    1970-01-01T00:00:00.000Z  notify:0a50500b2a3435fe#1            notify            EXECUTED                result "alice"
9    1970-01-01T00:00:00.000Z  chargeCard:c6a6831ac1abd02d#1        chargeCard        INTENT
10   1970-01-01T00:00:00.000Z  chargeCard:c6a6831ac1abd02d#1        chargeCard        EXECUTED                result "ch-4200"
11   1970-01-01T00:00:00.000Z  sendWireTransfer:b16a05a83145bc00#1  sendWireTransfer  AWAITING_APPROVAL       input sha256 b16a05a83145…
12   1970-01-01T00:00:00.000Z                                                         SAGA_AWAITING_APPROVAL  m-1/sendWireTransfer:b16a05a83145bc00#1
13   1970-01-01T00:00:00.000Z  sendWireTransfer:b16a05a83145bc00#1  sendWireTransfer  APPROVED                by bob (valid until 1970-01-01T00:01:00.000Z)
14   1970-01-01T00:00:01.000Z  sendWireTransfer:b16a05a83145bc00#1  sendWireTransfer  APPROVED                renewed by alice (valid until 1970-01-01T01:00:00.000Z)
15   1970-01-01T00:00:01.000Z                                                         SAGA_RESUMED
16   1970-01-01T00:00:01.000Z  sendWireTransfer:b16a05a83145bc00#1  sendWireTransfer  INTENT
17   1970-01-01T00:00:01.000Z  sendWireTransfer:b16a05a83145bc00#1  sendWireTransfer  EXECUTED                result "wire-4200"
18   1970-01-01T00:00:01.000Z  ship:1f08eb87dec7a6fa#1              ship              INTENT
19   1970-01-01T00:00:01.000Z  ship:1f08eb87dec7a6fa#1              ship              FAILED                  failed (not applied): the warehouse refused the order
20   1970-01-01T00:00:01.000Z                                                         SAGA_COMPENSATING       OutcomeFailed: failed (not applied): the warehouse refused the order
21   1970-01-01T00:00:01.000Z  sendWireTransfer:b16a05a83145bc00#1  sendWireTransfer  SKIPPED                 irreversible: no undo exists
22   1970-01-01T00:00:01.000Z  chargeCard:c6a6831ac1abd02d#1        chargeCard        COMPENSATING
23   1970-01-01T00:00:01.000Z  chargeCard:c6a6831ac1abd02d#1        chargeCard        COMPENSATED
24   1970-01-01T00:00:01.000Z  notify:0a50500b2a3435fe#1            notify            COMPENSATING
25   1970-01-01T00:00:01.000Z  notify:0a50500b2a3435fe#1            notify            COMPENSATED
26   1970-01-01T00:00:01.000Z  reserveInventory:be53a4d2deafda9b#1  reserveInventory  COMPENSATING
27   1970-01-01T00:00:01.000Z  reserveInventory:be53a4d2deafda9b#1  reserveInventory  COMPENSATED
28   1970-01-01T00:00:01.000Z                                                         SAGA_COMPENSATED`

describe("effect-saga show's journal table", { timeout: 60_000 }, () => {
  it.scoped(
    "reads every entry with the saga's steps and entries once: the outcome column as before (an earlier INTENT run again says so since 0.5.0)",
    () =>
      Effect.gen(function* () {
        const db = path.join(dir, "m.db")
        expect((yield* onFile(db, Saga.run("m-1", order)))._tag).toBe("NeedsAttention")
        // Called again with the same key (its tool says it may be): a second INTENT of the step.
        expect((yield* onFile(db, Saga.resume("m-1", order)))._tag).toBe("AwaitingApproval")
        const wire = (yield* onFile(db, Saga.status("m-1"))).steps.find((step) => step.state === "awaiting_approval")!
        yield* onFile(db, Saga.approve("m-1", wire.stepId, { by: "bob", expiresAt: "1970-01-01T00:01:00.000Z" }))
        yield* TestClock.adjust("1 second")
        yield* onFile(
          db,
          Saga.renewApproval("m-1", wire.stepId, { by: "alice", expiresAt: "1970-01-01T01:00:00.000Z" })
        )
        // The wire runs; shipping fails; the saga compensates.
        expect((yield* onFile(db, Saga.resume("m-1", order)))._tag).toBe("Compensated")
        const shown = yield* cliInProcess("show", "m-1", "--db", db)
        expect(shown.stdout.slice(shown.stdout.indexOf("\nseq ") + 1).trimEnd()).toBe(expected)
      })
  )
})
