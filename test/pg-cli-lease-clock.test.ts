/**
 * On PostgreSQL, `list`, `show` and `approvals` judge a lease by the server's clock, as the workers'
 * claims do: a CLI host whose clock is ahead does not call a live worker's lease lapsed.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, TestClock } from "effect"
import { Approval, Journal, Saga } from "../src/index.js"
import * as Postgres from "../src/Postgres.js"
import { cliInProcess } from "./fixtures/cli-in-process.js"
import { payout } from "./fixtures/http-saga.js"
import { freshDatabase } from "./fixtures/postgres.js"

const url = await freshDatabase("effect_saga_cli_lease_clock")
const OnPostgres = Saga.layerWith({ owner: "setup" }).pipe(Layer.provideMerge(Postgres.layer({ url })))

const lineOf = (text: string, start: string) => text.split("\n").find((line) => line.startsWith(start))

describe("the CLI on PostgreSQL, on a host whose clock is off", { timeout: 60_000 }, () => {
  it.effect("list and show judge a lease by the server's clock, not the CLI host's", () =>
    Effect.gen(function* () {
      // A worker mid-step: its lease, written off the server's clock, lasts a minute more.
      yield* Effect.scoped(
        Effect.provide(
          Effect.flatMap(Journal.Journal, (journal) =>
            journal.append(
              "k1",
              Journal.empty,
              [
                { stepId: null, toolName: null, phase: "SAGA_STARTED", input: null, payload: null },
                { stepId: "work:1", toolName: "work", phase: "INTENT", input: "1", payload: null }
              ],
              { owner: "worker-b", ttlMillis: 60_000 }
            )
          ),
          OnPostgres
        )
      )
      // The CLI's host reads five minutes ahead of the server.
      yield* TestClock.setTime(Date.now() + 5 * 60_000)

      const listed = yield* cliInProcess("list", "--db", url)
      expect(listed.stdout).toMatch(/^k1\s+running\s.*\sworker-b until \S+$/m)
      expect(listed.stdout).not.toContain("no worker is driving it")
      expect(listed.code).toBe(0)
      const shown = yield* cliInProcess("show", "k1", "--db", url)
      expect(lineOf(shown.stdout, "lease ")).toMatch(/^lease worker-b until \S+$/)
      expect(lineOf(shown.stdout, "next: ")).toMatch(/^next: wait: work:1 is running now, by worker-b/)
      expect(shown.code).toBe(0)
    })
  )

  it.effect(
    "approvals: a decision the journal lacks while a live lease holds the saga is a command between its writes, not forged",
    () =>
      Effect.gen(function* () {
        // A saga awaiting approval; the approvals table holds bob's approval, the journal not yet (an
        // approve between its two writes), and the saga's lease lasts a minute more by the server's clock.
        yield* Effect.scoped(
          Effect.provide(
            Effect.gen(function* () {
              const waiting = yield* Saga.run("a1", payout)
              if (waiting._tag !== "AwaitingApproval") throw new Error(waiting._tag)
              const { request } = waiting
              yield* Approval.approve(request.requestId, { by: "bob", inputDigest: request.inputDigest })
              const journal = yield* Journal.Journal
              const claimed = yield* journal.claim("a1", { owner: "bob-cli", ttlMillis: 60_000 })
              expect(Option.isSome(claimed)).toBe(true)
            }),
            OnPostgres
          )
        )
        // The CLI's host reads two hours ahead of the server.
        yield* TestClock.setTime(Date.now() + 2 * 60 * 60_000)

        const listed = yield* cliInProcess("approvals", "--db", url, "--json")
        const requests = JSON.parse(listed.stdout) as ReadonlyArray<{ sagaId: string; tampered: unknown }>
        expect(requests.filter((request) => request.sagaId === "a1").map((request) => request.tampered)).toEqual([null])
        expect(listed.code).toBe(0)
        const shown = yield* cliInProcess("show", "a1", "--db", url)
        expect(shown.stdout).not.toContain("TAMPERED")
        expect(lineOf(shown.stdout, "next: ")).toMatch(/^next: wait: bob-cli holds the saga's lease until /)
      })
  )
})
