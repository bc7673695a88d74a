/**
 * A step whose outcome is unknown and whose tool retries by key (`retryMode: "idempotency-key"`):
 * its `INTENT` says so, and `show`, `Saga.status`, the API and the console tell the operator that a
 * resume runs it again with the same key, which then settles it; a tool that does not retry is
 * resolved, as before.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Ref, Schema } from "effect"
import { Compensable, Journal, Outcome, Saga, SagaResult } from "../src/index.js"
import { cliInProcess as cli } from "./fixtures/cli-in-process.js"
import { consolePage } from "./fixtures/console-forms.js"
import { clientAs, freshDb, onDb, serveOn } from "./fixtures/http-saga.js"

/** A carrier booking whose first answer is lost (a timeout), then answers; it records each key it is called with. */
const carrierWorld = Effect.gen(function* () {
  const keys = yield* Ref.make<ReadonlyArray<string>>([])
  const book = (retryMode: "idempotency-key" | "none") =>
    Compensable.make({
      name: retryMode === "none" ? "bookOnce" : "bookCarrier",
      input: Schema.String,
      success: Schema.String,
      retryMode,
      execute: (parcel, step) =>
        Effect.flatMap(
          Ref.updateAndGet(keys, (seen) => [...seen, step.idempotencyKey]),
          (seen) =>
            seen.length === 1
              ? Effect.fail(Outcome.unknown("the carrier did not answer"))
              : Effect.succeed(`booked-${parcel}`)
        ),
      compensate: () => Effect.void
    })
  return { keys, book }
})

const intentOf = (db: string, sagaId: string) =>
  Effect.map(
    onDb(
      db,
      Effect.flatMap(Journal.Journal, (journal) => journal.read(sagaId))
    ),
    (entries) => entries.find((entry) => entry.phase === "INTENT")!
  )

describe("a step whose tool retries by key, left unknown", { timeout: 60_000 }, () => {
  it.scopedLive("its INTENT says so; show says a resume runs it again; resumed, it settles with the same key", () =>
    Effect.gen(function* () {
      const db = freshDb("retries-by-key")
      const { book, keys } = yield* carrierWorld
      const program = book("idempotency-key")("p-1")
      const first = yield* onDb(db, Saga.run("ship-1", program))
      expect(SagaResult.needsHuman(first)).toBe(true)
      expect(first._tag).toBe("NeedsAttention")

      const intent = yield* intentOf(db, "ship-1")
      expect(JSON.parse(intent.payload!)).toMatchObject({ retriesByKey: true })
      const status = yield* onDb(db, Saga.status("ship-1"))
      expect(status.steps[0]).toMatchObject({ state: "unknown", retriesByKey: true })
      const stepId = status.steps[0]!.stepId

      const shown = yield* cli("show", "ship-1", "--db", db)
      const next = shown.stdout.split("\n").filter((line) => line.startsWith("next: "))
      expect(next[0]).toBe(
        `next: the tool of ${stepId} retries by key (its INTENT says so): a resume runs the call again with the same idempotency key, which its provider answers as it did the first time: resume the saga, by the program that started it, run again under its id: Saga.resume("ship-1", program) or Saga.run; or, once you know its outcome, effect-saga resolve ship-1 ${stepId} --applied --result JSON|--not-applied --as WHO --revision ${status.revision} --digest ${status.digest}; before --not-applied, make sure the call cannot still happen: a worker whose lease lapsed may only be paused (its process dead or restarted, or the provider refusing the key ship-1/${stepId} from now on)`
      )

      // The API and the console say so too.
      const baseUrl = yield* serveOn(db)
      const detail = yield* Effect.flatMap(clientAs(baseUrl, "alice"), (client) =>
        client.sagas.get({ path: { sagaId: "ship-1" } })
      )
      expect(detail.steps[0]).toMatchObject({ state: "unknown", retriesByKey: true })
      const page = yield* consolePage(baseUrl, "/console/sagas/ship-1")
      expect(page.text).toContain(
        `<p id="retries-by-key">The tool of ${stepId} retries by key (its INTENT says so): a resume runs the call again with the same idempotency key, which its provider answers as it did the first time: instead of resolving it, you may resume the saga, by a worker that has its program.</p>`
      )

      // What show said holds: resumed, the call runs again with the key it had, and the saga completes.
      const resumed = yield* onDb(db, Saga.resume("ship-1", program))
      expect(resumed).toMatchObject({ _tag: "Completed", value: "booked-p-1" })
      const [firstKey, secondKey] = yield* Ref.get(keys)
      expect(secondKey).toBe(firstKey)
    })
  )

  it.scopedLive("beside a step a resume does not settle, show says to resolve that one first, then resume", () =>
    Effect.gen(function* () {
      const db = freshDb("retries-beside")
      // Two worlds: each tool's first answer is lost.
      const keyedWorld = yield* carrierWorld
      const onceWorld = yield* carrierWorld
      const program = Effect.all([keyedWorld.book("idempotency-key")("p-3"), onceWorld.book("none")("p-4")], {
        concurrency: "unbounded"
      })
      expect((yield* onDb(db, Saga.run("ship-3", program)))._tag).toBe("NeedsAttention")
      const status = yield* onDb(db, Saga.status("ship-3"))
      const keyed = status.steps.find((step) => step.toolName === "bookCarrier")!
      const once = status.steps.find((step) => step.toolName === "bookOnce")!
      expect([keyed.state, once.state]).toEqual(["unknown", "unknown"])
      const shown = yield* cli("show", "ship-3", "--db", db)
      const keyedLine = shown.stdout.split("\n").find((line) => line.startsWith(`next: the tool of ${keyed.stepId} `))
      expect(keyedLine).toContain(
        `: once ${once.stepId} is resolved (a resume stops on it again), resume the saga, by the program that started it`
      )
      expect(shown.stdout).toContain(`next: effect-saga resolve ship-3 ${once.stepId} --applied`)
      const page = yield* consolePage(yield* serveOn(db), "/console/sagas/ship-3")
      expect(page.text).toContain(
        `instead of resolving it, you may once ${once.stepId} is resolved (a resume stops on it again), resume the saga, by a worker that has its program.</p>`
      )
    })
  )

  it.scopedLive("a tool that does not retry by key says nothing of it: the step is resolved, as before", () =>
    Effect.gen(function* () {
      const db = freshDb("retries-none")
      const { book } = yield* carrierWorld
      yield* onDb(db, Saga.run("ship-2", book("none")("p-2")))
      const intent = yield* intentOf(db, "ship-2")
      expect(JSON.parse(intent.payload!)).not.toHaveProperty("retriesByKey")
      const status = yield* onDb(db, Saga.status("ship-2"))
      expect(status.steps[0]).toMatchObject({ state: "unknown" })
      expect(status.steps[0]).not.toHaveProperty("retriesByKey")
      const shown = yield* cli("show", "ship-2", "--db", db)
      expect(shown.stdout).toContain(`next: effect-saga resolve ship-2 ${status.steps[0]!.stepId} --applied`)
      expect(shown.stdout).not.toContain("retries by key")
      const page = yield* consolePage(yield* serveOn(db), "/console/sagas/ship-2")
      expect(page.text).not.toContain('id="retries-by-key"')
    })
  )
})
