/**
 * On PostgreSQL, the HTTP API and the console judge a lease by the server's clock, as the workers'
 * claims and the CLI do: an HTTP host whose clock is ahead does not call a live worker's saga stuck.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, TestClock } from "effect"
import { Journal, Saga } from "../src/index.js"
import * as Reading from "../src/internal/http/reading.js"
import * as Postgres from "../src/Postgres.js"
import { freshDatabase } from "./fixtures/postgres.js"

const url = await freshDatabase("effect_saga_http_lease_clock")
const OnPostgres = Saga.layerWith({ owner: "api" }).pipe(Layer.provideMerge(Postgres.layer({ url })))

describe("the HTTP API on PostgreSQL, on a host whose clock is off", { timeout: 60_000 }, () => {
  it.effect("a saga a live worker drives is not stuck, and the console's page reads the server's now", () =>
    Effect.gen(function* () {
      // A saga started with Saga.run, mid-step: its worker's lease, off the server's clock, lasts a minute more.
      const journal = yield* Journal.Journal
      yield* journal.append(
        "h1",
        Journal.empty,
        [
          { stepId: null, toolName: null, phase: "SAGA_STARTED", input: null, payload: null },
          { stepId: "work:1", toolName: "work", phase: "INTENT", input: "1", payload: null }
        ],
        { owner: "worker-b", ttlMillis: 60_000 }
      )
      // The HTTP host reads five minutes ahead of the server.
      yield* TestClock.setTime(Date.now() + 5 * 60_000)

      const one = yield* Reading.getSaga("h1")
      expect(one.saga).toMatchObject({ sagaId: "h1", status: "running", stuck: false })
      const listed = yield* Reading.listSagas({})
      expect(listed.sagas.find((saga) => saga.sagaId === "h1")).toMatchObject({ stuck: false, needsHuman: false })
      const page = yield* Reading.sagaPage("h1")
      expect(page.now).toBeLessThan(Date.parse(page.detail.saga.lease!.expiresAt))
    }).pipe(Effect.provide(OnPostgres))
  )
})
