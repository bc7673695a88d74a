/**
 * Why this fixture exists: the journal is durable and hash-chained, and the chain covers every byte
 * of every entry (its input and payload as JSON text). A journal written by one version of the
 * library must therefore be read, verified and replayed by every later one exactly as written:
 * a payload re-encoded differently is a broken chain, a result decoded differently is a different
 * replay. `test/fixtures/journal-v0/journal.db` was written by the main of before the restructure
 * of `src/` (issue 14: "a change of structure, not of behaviour"), with the public API only, and
 * holds every phase of `Journal.Phase` and the payload variants each writer produces;
 * `expected.json` beside it is what reading it returned then and what running each finished saga
 * again answered. The programs that wrote it are in `fixtures/journal-v0/world.ts`, shared with
 * this test. Every test works on a copy of the file; the committed one is never opened.
 *
 * Regenerating (`npx tsx test/fixtures/journal-v0/generate.ts`) is only for a deliberate change of
 * the journal's format, reviewed as such (and then the old file should rather be kept beside the
 * new one): never to make this test pass after a refactor. NOTE: a phase added to `Journal.Phase`
 * fails "holds every phase" below until the fixture is regenerated with a saga that writes it.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, assert, describe, expect, it } from "@effect/vitest"
import { Effect, Option, TestClock } from "effect"
import { Approval, Journal, Saga } from "../src/index.js"
import { noKeys, onStore, rows, snapshot } from "./fixtures/journal-v0/store.js"
import { EPOCH, makeWorld, replays, sagaIds } from "./fixtures/journal-v0/world.js"

describe("a journal written before the restructure (journal-v0)", () => {
  it("holds every phase of Journal.Phase", () => {
    const written = new Set(rows(copyOfFixture(), "entries").map((row) => row.phase))
    expect(Journal.Phase.literals.filter((phase) => !written.has(phase))).toEqual([])
  })

  it("holds every payload variant it was written for", () => {
    const entries = Object.values(expected.sagas).flatMap((saga) => saga.entries)
    const missing = Object.entries(variants).filter(([, holds]) => !entries.some(holds))
    expect(missing.map(([name]) => name)).toEqual([])
  })

  it.effect("reads every saga's row and entries exactly as they were written, byte for byte", () =>
    onFixture(
      Effect.gen(function* () {
        const journal = yield* Journal.Journal
        const listed = yield* journal.list()
        expect(listed.map((record) => record.sagaId).sort()).toEqual(sagaIdsOfFixture)
        for (const sagaId of sagaIdsOfFixture) {
          const saga = expected.sagas[sagaId]!
          expect(json(Option.getOrUndefined(yield* journal.get(sagaId)))).toStrictEqual(saga.row)
          expect(json(yield* journal.read(sagaId))).toStrictEqual(saga.entries)
        }
      })
    )
  )

  it.effect("every saga verifies, and Saga.status and Saga.list say that none is tampered", () =>
    onFixture(
      Effect.gen(function* () {
        for (const sagaId of sagaIdsOfFixture) {
          const { entries, row } = expected.sagas[sagaId]!
          expect(yield* Journal.verify(sagaId)).toEqual({ _tag: "Intact", entries: entries.length, digest: row.digest })
          const status = yield* Saga.status(sagaId)
          expect(status).toMatchObject({ status: row.status, revision: row.revision, digest: row.digest })
          expect(status.tampered).toBeUndefined()
        }
        const listed = yield* Saga.list()
        expect(listed.map((saga) => [saga.sagaId, saga.tampered]).sort()).toEqual(
          sagaIdsOfFixture.map((sagaId) => [sagaId, undefined])
        )
      })
    )
  )

  describe("running a finished saga again", () => {
    it("is tried for every saga that finished", () => {
      const finished = sagaIdsOfFixture.filter((sagaId) => Journal.isFinished(expected.sagas[sagaId]!.row.status))
      const replayed = sagaIdsOfFixture.filter((sagaId) => expected.sagas[sagaId]!.replay !== null)
      expect(replayed).toEqual(finished)
      expect(replays).toHaveLength(finished.length)
    })

    for (const replay of replays) {
      it.effect(`${replay.name}: answers as it did, runs no tool and writes nothing`, () => {
        const file = copyOfFixture()
        const before = snapshot(file)
        const world = makeWorld()
        return Effect.gen(function* () {
          const { answer, sagaId } = yield* onStore(file, owner)(replay.run(world))
          expect(answer).toStrictEqual(expected.sagas[sagaId]?.replay)
          expect(snapshot(file)).toStrictEqual(before)
          expect(world.counters).toStrictEqual(makeWorld().counters)
        })
      })
    }
  })

  it.effect(
    "the saga left awaiting approval is approved and resumed: its step runs once, it completes, it verifies",
    () =>
      Effect.gen(function* () {
        const sagaId = sagaIds.awaiting
        const written = expected.sagas[sagaId]!
        const world = makeWorld()
        yield* TestClock.setTime(EPOCH + 24 * 3_600_000)
        yield* onFixture(
          Effect.gen(function* () {
            const pending = yield* Approval.pending
            expect(pending.map((request) => request.sagaId)).toEqual([sagaId])
            yield* Saga.approve(sagaId, pending[0]!.stepId, { by: "erin" })
            const result = yield* Saga.run(sagaId, world.programs.reserveThenWire)
            assert(result._tag === "Completed")
            expect(result.value).toEqual({ reservation: "res-W-1", transfer: "wire-4200-DE89 3704 0044 0532 0130 00" })
            expect(world.counters).toStrictEqual({ ...makeWorld().counters, calls: { ...zeros, wire: 1 } })

            const entries = yield* Effect.flatMap(Journal.Journal, (journal) => journal.read(sagaId))
            expect(json(entries.slice(0, written.entries.length))).toStrictEqual(written.entries)
            expect(entries.slice(written.entries.length).map((entry) => entry.phase)).toEqual([
              "APPROVED",
              "SAGA_RESUMED",
              "INTENT",
              "EXECUTED",
              "SAGA_COMPLETED"
            ])
            expect(yield* Journal.verify(sagaId)).toMatchObject({ _tag: "Intact", entries: entries.length })
            expect(yield* Saga.status(sagaId)).toMatchObject({ status: "completed", tampered: undefined })
          })
        )
      })
  )

  it.effect(
    "every saga's NDJSON export is its entries and an end line, and imports into a fresh memory journal that verifies it",
    () =>
      Effect.gen(function* () {
        const exports = yield* onFixture(Effect.forEach(sagaIdsOfFixture, Journal.exportNdjson))
        yield* Effect.gen(function* () {
          for (const [index, sagaId] of sagaIdsOfFixture.entries()) {
            const { entries, row } = expected.sagas[sagaId]!
            const text = exports[index]!
            const lines = text
              .split("\n")
              .filter((line) => line !== "")
              .map((line) => JSON.parse(line))
            expect(lines.slice(0, -1)).toStrictEqual(entries)
            expect(lines.at(-1)).toStrictEqual({
              exportEnd: { sagaId, entries: entries.length, digest: row.digest }
            })
            const imported = yield* Journal.importNdjson(text)
            expect(imported).toMatchObject({ sagaId, status: row.status, revision: row.revision, digest: row.digest })
            expect(yield* Journal.verify(sagaId)).toEqual({
              _tag: "Intact",
              entries: entries.length,
              digest: row.digest
            })
          }
        }).pipe(Effect.provide(Journal.layerMemory), Effect.withConfigProvider(noKeys))
      })
  )
})

/** What `generate.ts` recorded for one saga: its row and entries as read, and what a replay answered. */
interface ExpectedSaga {
  readonly row: Journal.SagaRecord
  readonly entries: ReadonlyArray<Journal.Entry>
  readonly replay: unknown
}

const fixtureDir = path.join(path.dirname(fileURLToPath(import.meta.url)), "fixtures", "journal-v0")
const committed = path.join(fixtureDir, "journal.db")
const expected: { readonly sagas: Record<string, ExpectedSaga> } = JSON.parse(
  fs.readFileSync(path.join(fixtureDir, "expected.json"), "utf8")
)
const sagaIdsOfFixture = Object.keys(expected.sagas).sort()

const owner = "journal-v0-test"
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-journal-v0-"))
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }))

let copies = 0
/** A fresh copy of the committed file, for one test to open and write. */
const copyOfFixture = (): string => {
  const file = path.join(scratch, `journal-${++copies}.db`)
  fs.copyFileSync(committed, file)
  return file
}

/** Runs `effect` on the store of a fresh copy of the fixture. */
const onFixture = <A, E>(effect: Effect.Effect<A, E, Saga.Saga | Journal.Journal | Approval.Approval>) =>
  onStore(copyOfFixture(), owner)(effect)

const json = (value: unknown): unknown => JSON.parse(JSON.stringify(value))

const zeros = makeWorld().counters.calls

const payloadOf = (entry: Journal.Entry): Record<string, unknown> =>
  entry.payload === null ? {} : JSON.parse(entry.payload)

/** The payload variants the fixture was written to hold, each as a test of one entry. */
const variants: Record<string, (entry: Journal.Entry) => boolean> = {
  "a saga's origin (started from a definition)": (entry) =>
    entry.phase === "SAGA_STARTED" && payloadOf(entry).definition === "checkout",
  "an explicit undo's run": (entry) => entry.phase === "SAGA_STARTED" && typeof payloadOf(entry).effectId === "string",
  "a plain receipt": (entry) => entry.phase === "EXECUTED" && typeof payloadOf(entry).receipt === "string",
  "a step that changes nothing": (entry) => entry.phase === "EXECUTED" && payloadOf(entry).changesNothing === true,
  "a deferred approval": (entry) => entry.phase === "AWAITING_APPROVAL" && payloadOf(entry).deferred === true,
  "a deferred call run once approved": (entry) => entry.phase === "INTENT" && payloadOf(entry).deferred === true,
  "a renewed approval": (entry) => entry.phase === "APPROVED" && payloadOf(entry).renewedBy === "bob",
  "an approval with an expiry": (entry) => entry.phase === "APPROVED" && typeof payloadOf(entry).expiresAt === "string",
  "a rejection by an operator": (entry) => entry.phase === "REJECTED" && payloadOf(entry).by === "carol",
  "a withdrawn approval request": (entry) => entry.phase === "REJECTED" && payloadOf(entry).by === "effect-saga",
  "a typed failure": (entry) =>
    entry.phase === "FAILED" && (payloadOf(entry).error as { _tag?: unknown } | undefined)?._tag === "CardDeclined",
  "a defect": (entry) => entry.phase === "FAILED" && payloadOf(entry).defect === true,
  "a failure that does not taint the saga": (entry) => entry.phase === "FAILED" && payloadOf(entry).taints === false,
  "an unknown step resolved as applied": (entry) =>
    entry.phase === "EXECUTED" && typeof payloadOf(entry).resolvedBy === "string",
  "an unknown step resolved as not applied": (entry) =>
    entry.phase === "FAILED" && typeof payloadOf(entry).resolvedBy === "string"
}
