/**
 * The journal's conformance suite: every `Journal` backend must pass it (memory, SQLite, Postgres).
 *
 * Every test uses saga ids of its own and `list` results are narrowed to them, so a backend whose
 * storage outlives one test still passes.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, Schema, TestClock } from "effect"
import { Approval, Compensable, Journal, Saga } from "../src/index.js"
import { appendAll, saga, step } from "./fixtures/drafts.js"

export const suite = (name: string, layer: Layer.Layer<Journal.Journal, unknown>) =>
  describe(`Journal conformance: ${name}`, () => {
    let propRuns = 0

    it.effect("an append to a new saga starts from Journal.empty and returns the entries it wrote", () =>
      Effect.gen(function* () {
        const journal = yield* Journal.Journal
        const written = yield* journal.append("new", Journal.empty, [saga("SAGA_STARTED"), step("INTENT", "a")])
        expect(written.map((entry) => [entry.sagaId, entry.seq, entry.phase])).toEqual([
          ["new", 1, "SAGA_STARTED"],
          ["new", 2, "INTENT"]
        ])
        expect(yield* journal.read("new")).toEqual(written)
        const record = yield* journal.get("new").pipe(Effect.map(Option.getOrThrow))
        expect(record).toMatchObject({ sagaId: "new", status: "running", revision: 2, digest: written[1]!.hash })
      }).pipe(Effect.provide(layer))
    )

    it.effect("seq is gap-free from 1 across appends", () =>
      Effect.gen(function* () {
        const journal = yield* Journal.Journal
        let position = Journal.empty
        for (const size of [1, 3, 2]) {
          const drafts = Array.from({ length: size }, () => step("INTENT", "a"))
          const written = yield* journal.append("gapless", position, drafts)
          position = { revision: written.at(-1)!.seq, digest: written.at(-1)!.hash }
        }
        const entries = yield* journal.read("gapless")
        expect(entries.map((entry) => entry.seq)).toEqual([1, 2, 3, 4, 5, 6])
      }).pipe(Effect.provide(layer))
    )

    it.effect("countOpen counts the sagas under each open status, and none that completed or compensated", () =>
      Effect.gen(function* () {
        const journal = yield* Journal.Journal
        const before = yield* journal.countOpen()
        const ends: ReadonlyArray<readonly [string, ReadonlyArray<Journal.Phase>]> = [
          ["open-running", []],
          ["open-compensating", ["SAGA_COMPENSATING"]],
          ["open-suspended", ["SAGA_SUSPENDED"]],
          ["open-awaiting-1", ["SAGA_AWAITING_APPROVAL"]],
          ["open-awaiting-2", ["SAGA_AWAITING_APPROVAL"]],
          ["open-attention", ["SAGA_NEEDS_ATTENTION"]],
          ["open-dirty", ["SAGA_COMPENSATING", "SAGA_COMPENSATION_FAILED"]],
          ["open-completed", ["SAGA_COMPLETED"]],
          ["open-compensated", ["SAGA_COMPENSATING", "SAGA_COMPENSATED"]],
          ["open-resumed", ["SAGA_SUSPENDED", "SAGA_RESUMED", "SAGA_COMPLETED"]]
        ]
        for (const [sagaId, phases] of ends) {
          yield* appendAll(journal, sagaId, [saga("SAGA_STARTED")], ...phases.map((phase) => [saga(phase)]))
        }
        const after = yield* journal.countOpen()
        const added = Object.fromEntries(
          Journal.OpenStatus.literals.map((status) => [status, after[status] - before[status]])
        )
        expect(added).toEqual({
          running: 1,
          compensating: 1,
          suspended: 1,
          awaiting_approval: 2,
          needs_attention: 1,
          compensation_failed: 1
        })
      }).pipe(Effect.provide(layer))
    )

    it.effect("each hash chains over its predecessor and verifyEntries finds the chain intact", () =>
      Effect.gen(function* () {
        const journal = yield* Journal.Journal
        const entries = yield* appendAll(
          journal,
          "chained",
          [saga("SAGA_STARTED"), step("INTENT", "a")],
          [step("EXECUTED", "a")]
        )
        let previous = Journal.empty.digest
        for (const entry of entries) {
          expect(entry.hash).toBe(Journal.hashEntry(previous, entry))
          previous = entry.hash
        }
        const record = yield* journal.get("chained").pipe(Effect.map(Option.getOrThrow))
        expect(Journal.verifyEntries(entries)).toEqual({ _tag: "Intact", entries: 3, digest: record.digest })
      }).pipe(Effect.provide(layer))
    )

    it.effect("an append with a stale revision fails with ConcurrencyConflict and writes nothing", () =>
      Effect.gen(function* () {
        const journal = yield* Journal.Journal
        const before = yield* appendAll(journal, "stale", [saga("SAGA_STARTED"), step("INTENT", "a")])
        const error = yield* Effect.flip(journal.append("stale", Journal.empty, [step("EXECUTED", "a")]))
        expect(error).toMatchObject({
          _tag: "ConcurrencyConflict",
          sagaId: "stale",
          expectedRevision: 0,
          actualRevision: 2
        })
        expect(yield* journal.read("stale")).toEqual(before)
        expect(yield* journal.get("stale").pipe(Effect.map(Option.getOrThrow))).toMatchObject({ revision: 2 })
      }).pipe(Effect.provide(layer))
    )

    it.effect("an append with the right revision but a stale digest fails with ConcurrencyConflict", () =>
      Effect.gen(function* () {
        const journal = yield* Journal.Journal
        const before = yield* appendAll(journal, "forked", [saga("SAGA_STARTED")])
        const error = yield* Effect.flip(
          journal.append("forked", { revision: 1, digest: "f".repeat(64) }, [saga("SAGA_COMPLETED")])
        )
        expect(error._tag).toBe("ConcurrencyConflict")
        expect(yield* journal.read("forked")).toEqual(before)
        expect(yield* journal.get("forked").pipe(Effect.map(Option.getOrThrow))).toMatchObject({ status: "running" })
      }).pipe(Effect.provide(layer))
    )

    it.effect("of concurrent appends at the same position exactly one wins", () =>
      Effect.gen(function* () {
        const journal = yield* Journal.Journal
        const [started] = yield* appendAll(journal, "race", [saga("SAGA_STARTED")])
        const position = { revision: 1, digest: started!.hash }
        const attempts = yield* Effect.all(
          Array.from({ length: 8 }, (_, i) =>
            Effect.either(journal.append("race", position, [step("INTENT", `w${i}`)]))
          ),
          { concurrency: "unbounded" }
        )
        const winners = attempts.filter((attempt) => attempt._tag === "Right")
        expect(winners).toHaveLength(1)
        expect(attempts.filter((attempt) => attempt._tag === "Left").map((attempt) => attempt.left._tag)).toEqual(
          Array(7).fill("ConcurrencyConflict")
        )
        const entries = yield* journal.read("race")
        expect(entries).toHaveLength(2)
        expect(Journal.verifyEntries(entries)._tag).toBe("Intact")
      }).pipe(Effect.provide(layer))
    )

    it.effect("the status follows the last saga-level phase; step phases leave it as it was", () =>
      Effect.gen(function* () {
        const journal = yield* Journal.Journal
        const statuses: Array<Journal.SagaStatus> = []
        let position = Journal.empty
        for (const phase of [
          "SAGA_STARTED",
          "INTENT",
          "SAGA_AWAITING_APPROVAL",
          "APPROVED",
          "SAGA_RESUMED",
          "SAGA_COMPLETED"
        ] as const) {
          const [entry] = yield* journal.append("phased", position, [
            phase.startsWith("SAGA_") ? saga(phase) : step(phase, "a")
          ])
          position = { revision: entry!.seq, digest: entry!.hash }
          statuses.push((yield* journal.get("phased").pipe(Effect.map(Option.getOrThrow))).status)
        }
        expect(statuses).toEqual([
          "running",
          "running",
          "awaiting_approval",
          "awaiting_approval",
          "running",
          "completed"
        ])
      }).pipe(Effect.provide(layer))
    )

    it.effect.prop(
      "the status after any batch of phases is what Journal.statusAfter says",
      [Journal.Phase, Journal.Phase, Journal.Phase],
      (phases) =>
        Effect.gen(function* () {
          const journal = yield* Journal.Journal
          const sagaId = `prop-${++propRuns}`
          const drafts = phases.map((phase) => (phase.startsWith("SAGA_") ? saga(phase) : step(phase, "a")))
          yield* journal.append(sagaId, Journal.empty, drafts)
          const record = yield* journal.get(sagaId).pipe(Effect.map(Option.getOrThrow))
          expect(record.status).toBe(Journal.statusAfter("running", drafts))
        }).pipe(Effect.provide(layer)),
      { fastCheck: { numRuns: 50 }, timeout: 60_000 }
    )

    it.effect("list filters by status, oldest update first", () =>
      Effect.gen(function* () {
        const journal = yield* Journal.Journal
        yield* appendAll(journal, "list-done", [saga("SAGA_STARTED"), saga("SAGA_COMPLETED")])
        yield* TestClock.adjust("1 second")
        yield* appendAll(journal, "list-running", [saga("SAGA_STARTED")])
        yield* TestClock.adjust("1 second")
        yield* appendAll(journal, "list-waiting", [saga("SAGA_STARTED"), saga("SAGA_AWAITING_APPROVAL")])
        const found = yield* journal.list({ status: ["awaiting_approval", "completed"] })
        expect(ids(found, "list-")).toEqual(["list-done", "list-waiting"])
        expect(ids(yield* journal.list(), "list-")).toEqual(["list-done", "list-running", "list-waiting"])
      }).pipe(Effect.provide(layer))
    )

    it.effect("list filters by updatedBefore", () =>
      Effect.gen(function* () {
        const journal = yield* Journal.Journal
        yield* TestClock.setTime(Date.UTC(2030, 0, 1))
        yield* appendAll(journal, "age-old", [saga("SAGA_STARTED")])
        yield* TestClock.adjust("1 hour")
        yield* appendAll(journal, "age-new", [saga("SAGA_STARTED")])
        const cutoff = new Date(Date.UTC(2030, 0, 1, 0, 30)).toISOString()
        expect(ids(yield* journal.list({ updatedBefore: cutoff }), "age-")).toEqual(["age-old"])
        expect(ids(yield* journal.list({ updatedBefore: cutoff, status: ["completed"] }), "age-")).toEqual([])
      }).pipe(Effect.provide(layer))
    )

    it.effect(
      "list's updatedBefore is read as a time (a zone, an expanded year), and one that is not a time fails",
      () =>
        Effect.gen(function* () {
          const journal = yield* Journal.Journal
          yield* TestClock.setTime(Date.UTC(2031, 0, 1))
          yield* appendAll(journal, "zone-a", [saga("SAGA_STARTED")])
          const listed = (before: string) =>
            Effect.map(journal.list({ updatedBefore: before }), (found) => ids(found, "zone-"))
          // 01:00 at +02:00 is 23:00 the day before in UTC: before the saga's update.
          expect(yield* listed("2031-01-01T01:00+02:00")).toEqual([])
          expect(yield* listed("2031-01-01T00:00:00.001-00:00")).toEqual(["zone-a"])
          expect(yield* listed("+002031-01-01T00:00:00.001Z")).toEqual(["zone-a"])
          expect(yield* listed("2031-01-02")).toEqual(["zone-a"])
          for (const before of ["not a date", "2031-02-30"]) {
            const error = yield* Effect.flip(journal.list({ updatedBefore: before }))
            expect(error).toMatchObject({ _tag: "JournalError", operation: "list" })
            expect(error.reason).toContain("is not an ISO-8601 time")
          }
        }).pipe(Effect.provide(layer))
    )

    it.effect("a clock past year 9999 writes and claims nothing: a store's times could not order it", () =>
      Effect.gen(function* () {
        const journal = yield* Journal.Journal
        const holder = { owner: "y10k-worker", ttlMillis: 30_000 }
        yield* TestClock.setTime(Date.UTC(9999, 11, 31, 23, 59, 59, 999))
        const [last] = yield* appendAll(journal, "y10k-last", [saga("SAGA_STARTED")])
        expect(last!.at).toBe("9999-12-31T23:59:59.999Z")
        yield* TestClock.adjust("1 millis")
        const refused = yield* Effect.flip(journal.append("y10k-new", Journal.empty, [saga("SAGA_STARTED")]))
        assert(refused._tag === "JournalError")
        expect(refused.operation).toBe("append")
        expect(refused.reason).toContain(
          "the clock reads +010000-01-01T00:00:00.000Z, past 9999-12-31T23:59:59.999Z, the last time a journal can store"
        )
        expect(Option.isNone(yield* journal.get("y10k-new"))).toBe(true)
        const position = { revision: last!.seq, digest: last!.hash }
        const later = yield* Effect.flip(journal.append("y10k-last", position, [saga("SAGA_COMPLETED")]))
        expect(later).toMatchObject({ _tag: "JournalError", operation: "append" })
        expect(yield* Effect.flip(journal.claim("y10k-last", holder))).toMatchObject({
          _tag: "JournalError",
          operation: "claim"
        })
        expect(yield* Effect.flip(journal.claimLapsed(holder, 10))).toMatchObject({
          _tag: "JournalError",
          operation: "claim"
        })
        expect(yield* Effect.flip(journal.renew(holder))).toMatchObject({ _tag: "JournalError", operation: "renew" })
        // Past the last date JavaScript can name too: refused alike, never a defect.
        yield* TestClock.setTime(8.64e15 - 1_000)
        const far = yield* Effect.flip(journal.append("y10k-new", Journal.empty, [saga("SAGA_STARTED")]))
        expect(far).toMatchObject({ _tag: "JournalError", operation: "append" })
        // What was written before is still read, and ordered, as written.
        expect(yield* journal.read("y10k-last")).toEqual([last])
        expect(ids(yield* journal.list({ updatedBefore: "2030-01-01" }), "y10k-")).toEqual([])
        expect(ids(yield* journal.list({ updatedBefore: new Date(8.64e15).toISOString() }), "y10k-")).toEqual([])
      }).pipe(Effect.provide(layer))
    )

    it.effect("a lease that would end past year 9999 ends at its last millisecond, and holds until then", () =>
      Effect.gen(function* () {
        const journal = yield* Journal.Journal
        yield* TestClock.setTime(Date.UTC(9999, 11, 31, 23, 59, 50))
        yield* appendAll(journal, "y10k-lease", [saga("SAGA_STARTED")])
        const claimed = yield* journal.claim("y10k-lease", { owner: "first", ttlMillis: 30_000 })
        // PostgreSQL takes a lease's times from its server's clock, not Effect's.
        if (!name.startsWith("Postgres")) {
          expect(Option.getOrThrow(claimed).lease).toEqual({ owner: "first", expiresAt: "9999-12-31T23:59:59.999Z" })
          yield* TestClock.adjust("5 seconds")
          const held = yield* Effect.flip(journal.claim("y10k-lease", { owner: "second", ttlMillis: 30_000 }))
          expect(held).toMatchObject({ _tag: "LeaseHeld", owner: "first" })
        }
      }).pipe(Effect.provide(layer))
    )

    it.effect("an unknown saga reads as no entries and gets None", () =>
      Effect.gen(function* () {
        const journal = yield* Journal.Journal
        expect(yield* journal.read("nobody")).toEqual([])
        expect(Option.isNone(yield* journal.get("nobody"))).toBe(true)
      }).pipe(Effect.provide(layer))
    )

    it.effect("a tampered entry breaks verification at its seq", () =>
      Effect.gen(function* () {
        const journal = yield* Journal.Journal
        const entries = yield* appendAll(journal, "tampered", [
          saga("SAGA_STARTED"),
          step("INTENT", "a"),
          step("EXECUTED", "a")
        ])
        const tampered = entries.map((entry) => (entry.seq === 2 ? { ...entry, payload: '{"amount":1}' } : entry))
        expect(Journal.verifyEntries(tampered)).toMatchObject({ _tag: "Broken", seq: 2 })
        expect(Journal.verifyEntries(entries.filter((entry) => entry.seq !== 2))).toMatchObject({
          _tag: "Broken",
          seq: 3
        })
        expect(Journal.verifyEntries(yield* journal.read("tampered"))._tag).toBe("Intact")
      }).pipe(Effect.provide(layer))
    )

    it.effect("an import is kept as it came: a tampered entry still breaks verification, and an append chains on", () =>
      Effect.gen(function* () {
        const journal = yield* Journal.Journal
        const imported = chainOf("kept-import")
        yield* journal.importSaga(imported)
        expect(yield* journal.read("kept-import")).toEqual(imported)
        const last = imported[1]!
        yield* journal.append("kept-import", { revision: 2, digest: last.hash }, [step("EXECUTED", "a")])
        expect(Journal.verifyEntries(yield* journal.read("kept-import"))).toMatchObject({ _tag: "Intact", entries: 3 })

        // The hash is kept as imported, not chained again from the changed payload.
        const forged = chainOf("forged-import").map((entry) =>
          entry.seq === 2 ? { ...entry, payload: '{"idempotencyKey":"k","attempt":9}' } : entry
        )
        yield* journal.importSaga(forged)
        expect(yield* journal.read("forged-import")).toEqual(forged)
        expect(Journal.verifyEntries(yield* journal.read("forged-import"))).toMatchObject({ _tag: "Broken", seq: 2 })
      }).pipe(Effect.provide(layer))
    )

    it.effect("an import of no entries fails with a JournalError and writes nothing", () =>
      Effect.gen(function* () {
        const journal = yield* Journal.Journal
        const refused = yield* Effect.flip(journal.importSaga([]))
        expect(refused).toMatchObject({
          _tag: "JournalError",
          operation: "import",
          reason: "there are no entries to import"
        })
      }).pipe(Effect.provide(layer))
    )

    it.effect(
      "every phase's input and payload read back exactly, large ones too: a store keeps what it was given",
      () =>
        Effect.gen(function* () {
          const journal = yield* Journal.Journal
          const large = JSON.stringify({ note: "x".repeat(200_000) })
          const drafts: ReadonlyArray<Journal.Draft> = [
            saga("SAGA_STARTED"),
            { ...step("INTENT", "a"), input: large },
            { ...step("EXECUTED", "a"), payload: JSON.stringify({ result: large }) },
            { ...step("INTENT", "b"), input: '{"n":1}' },
            {
              ...step("FAILED", "b"),
              payload: JSON.stringify({ description: "card declined", defect: false, error: { code: 51 } })
            },
            { ...step("COMPENSATING", "a"), payload: '{"idempotencyKey":"kept-a/undo"}' },
            { ...step("COMPENSATION_FAILED", "a"), payload: '{"reason":"the provider said no"}' }
          ]
          const written = yield* appendAll(journal, "kept-exactly", drafts)
          const read = yield* journal.read("kept-exactly")
          expect(read).toEqual(written)
          expect(read.map((entry) => [entry.phase, entry.input, entry.payload])).toEqual(
            drafts.map((draft) => [draft.phase, draft.input, draft.payload])
          )
          expect(Journal.verifyEntries(read)).toMatchObject({ _tag: "Intact", entries: drafts.length })
        }).pipe(Effect.provide(layer))
    )

    it.effect("text from every Unicode plane round-trips exactly and its chain verifies", () =>
      Effect.gen(function* () {
        const journal = yield* Journal.Journal
        const sagaId = "ébène-✓-𝄞"
        const intent = { ...step("INTENT", "réserver:clé-🚀#1"), toolName: "réserver", input: '{"sku":"été-✓-𝄞"}' }
        const written = yield* appendAll(journal, sagaId, [saga("SAGA_STARTED"), intent])
        expect(written.map((entry) => [entry.sagaId, entry.stepId, entry.toolName, entry.input])).toEqual([
          [sagaId, null, null, null],
          [sagaId, "réserver:clé-🚀#1", "réserver", '{"sku":"été-✓-𝄞"}']
        ])
        expect(ids(yield* journal.list(), "ébène")).toEqual([sagaId])
        expect(yield* Journal.verify(sagaId)).toMatchObject({ _tag: "Intact", entries: 2 })
      }).pipe(Effect.provide(layer))
    )

    it.effect("verify of a saga the store holds nothing of is SagaNotFound, never Intact", () =>
      Effect.gen(function* () {
        expect(yield* Effect.flip(Journal.verify("never-written"))).toMatchObject({
          _tag: "SagaNotFound",
          sagaId: "never-written"
        })
      }).pipe(Effect.provide(layer))
    )

    it.effect("a phase no reader knows is refused on append, and nothing is written", () =>
      Effect.gen(function* () {
        const journal = yield* Journal.Journal
        const unknown = { ...step("INTENT", "a"), phase: "NOT_A_PHASE" } as unknown as Journal.Draft
        const error = yield* Effect.flip(journal.append("odd-phase", Journal.empty, [saga("SAGA_STARTED"), unknown]))
        expect(error).toMatchObject({
          _tag: "JournalError",
          operation: "append",
          reason: 'the phase "NOT_A_PHASE" is not a journal phase'
        })
        expect(yield* journal.read("odd-phase")).toEqual([])
        expect(Option.isNone(yield* journal.get("odd-phase"))).toBe(true)
      }).pipe(Effect.provide(layer))
    )

    it.effect("text that is not well-formed Unicode is refused on append and import, and nothing is written", () =>
      Effect.gen(function* () {
        const journal = yield* Journal.Journal
        const lone = "\uD800"
        const refusals: ReadonlyArray<readonly [string, string, Journal.Draft]> = [
          ["sagaId", `lone-saga${lone}`, saga("SAGA_STARTED")],
          ["stepId", "lone-step", step("INTENT", `a${lone}`)],
          ["toolName", "lone-tool", { ...step("INTENT", "a"), toolName: `tool${lone}` }],
          ["input", "lone-input", { ...step("INTENT", "a"), input: `"${lone}"` }],
          ["payload", "lone-payload", { ...step("EXECUTED", "a"), payload: `{"result":"${lone}"}` }]
        ]
        for (const [field, sagaId, draft] of refusals) {
          const error = yield* Effect.flip(journal.append(sagaId, Journal.empty, [saga("SAGA_STARTED"), draft]))
          expect(error).toMatchObject({ _tag: "JournalError", operation: "append" })
          expect(error.message).toContain(`the field ${field}: `)
          expect(error.message).toContain("is not well-formed Unicode (a lone surrogate")
          expect(yield* journal.read(sagaId)).toEqual([])
          expect(Option.isNone(yield* journal.get(sagaId))).toBe(true)
        }
        // An export written elsewhere (JSON escapes the surrogate, `\ud800`) whose chain verifies.
        const sagaId = `lone-import${lone}`
        const draft = { sagaId, seq: 1, stepId: null, toolName: null, phase: "SAGA_STARTED" as const }
        const entry = { ...draft, input: null, payload: null, at: "2024-01-01T00:00:00.000Z" }
        const entries = [{ ...entry, hash: Journal.hashEntry(Journal.empty.digest, entry) }]
        expect(Journal.verifyEntries(entries)._tag).toBe("Intact")
        const end = { exportEnd: { sagaId, entries: 1, digest: entries[0]!.hash } }
        const ndjson = `${JSON.stringify(entries[0])}\n${JSON.stringify(end)}\n`
        expect(ndjson).toContain("\\ud800")
        for (const attempt of [Journal.importNdjson(ndjson), journal.importSaga(entries)]) {
          expect(yield* Effect.flip(attempt)).toMatchObject({ _tag: "JournalError", operation: "import" })
        }
        expect(yield* journal.read(sagaId)).toEqual([])
        expect(ids(yield* journal.list(), "lone-")).toEqual([])
      }).pipe(Effect.provide(layer))
    )

    it.effect(
      "a NUL character (which PostgreSQL's text refuses) is refused on append by every store, and nothing is written",
      () =>
        Effect.gen(function* () {
          const journal = yield* Journal.Journal
          const refusals: ReadonlyArray<readonly [string, string, Journal.Draft]> = [
            ["sagaId", "nul-saga\0", saga("SAGA_STARTED")],
            ["stepId", "nul-step", step("INTENT", "a\0")],
            ["payload", "nul-payload", { ...step("EXECUTED", "a"), payload: '{"result":"a\0b"}' }]
          ]
          for (const [field, sagaId, draft] of refusals) {
            const error = yield* Effect.flip(journal.append(sagaId, Journal.empty, [saga("SAGA_STARTED"), draft]))
            expect(error).toMatchObject({ _tag: "JournalError", operation: "append" })
            expect(error.message).toContain(`the field ${field}: `)
            expect(error.message).toContain("holds a NUL character (U+0000) at index")
            expect(yield* journal.read(sagaId)).toEqual([])
          }
          expect(ids(yield* journal.list(), "nul-")).toEqual([])
          // A read or a lease naming such an id finds no saga, on every store (PostgreSQL would fail the statement).
          expect(yield* journal.get("nul-saga\0")).toEqual(Option.none())
          expect(yield* journal.claim("nul-saga\0", { owner: "w1", ttlMillis: 1000 })).toEqual(Option.none())
          yield* journal.release("w\0", "nul-saga\0")
        }).pipe(Effect.provide(layer))
    )

    it.effect("`at` is the Effect Clock's time as ISO-8601 UTC", () =>
      Effect.gen(function* () {
        const journal = yield* Journal.Journal
        yield* TestClock.setTime(Date.UTC(2024, 1, 29, 23, 59, 58, 7))
        const [first] = yield* journal.append("clocked", Journal.empty, [saga("SAGA_STARTED")])
        expect(first!.at).toBe("2024-02-29T23:59:58.007Z")
        yield* TestClock.adjust("2 seconds")
        yield* journal.append("clocked", { revision: 1, digest: first!.hash }, [saga("SAGA_COMPLETED")])
        const record = yield* journal.get("clocked").pipe(Effect.map(Option.getOrThrow))
        expect(record).toMatchObject({ createdAt: "2024-02-29T23:59:58.007Z", updatedAt: "2024-03-01T00:00:00.007Z" })
      }).pipe(Effect.provide(layer))
    )

    it.effect("an NDJSON export from another store imports as the same saga, and verify finds it intact", () =>
      Effect.gen(function* () {
        const exported = yield* Effect.provide(
          Effect.gen(function* () {
            const source = yield* Journal.Journal
            yield* appendAll(
              source,
              "imported",
              [saga("SAGA_STARTED"), step("INTENT", "tool:é-1#1")],
              [step("EXECUTED", "tool:é-1#1"), saga("SAGA_COMPLETED")]
            )
            return { ndjson: yield* Journal.exportNdjson("imported"), entries: yield* source.read("imported") }
          }),
          Journal.layerMemory
        )
        expect(exported.ndjson.trimEnd().split("\n")).toHaveLength(5) // four entries and the end line
        const renamed = yield* Effect.flip(Journal.importNdjson(exported.ndjson.replaceAll('"imported"', '"renamed"')))
        expect(renamed._tag).toBe("JournalCorrupted")
        const record = yield* Journal.importNdjson(exported.ndjson)
        expect(record).toMatchObject({ sagaId: "imported", status: "completed", revision: 4 })
        const journal = yield* Journal.Journal
        expect(yield* journal.read("imported")).toEqual(exported.entries)
        expect(yield* Journal.verify("imported")).toMatchObject({ _tag: "Intact", entries: 4 })
      }).pipe(Effect.provide(layer))
    )

    it.effect("an export cut short, or whose end line does not match its entries, is refused and writes nothing", () =>
      Effect.gen(function* () {
        const exported = yield* Effect.provide(
          Effect.gen(function* () {
            yield* appendAll(
              yield* Journal.Journal,
              "cut",
              [saga("SAGA_STARTED"), step("INTENT", "tool:a#1")],
              [step("EXECUTED", "tool:a#1"), step("INTENT", "tool:b#1")],
              [step("EXECUTED", "tool:b#1"), saga("SAGA_COMPLETED")]
            )
            return yield* Journal.exportNdjson("cut")
          }),
          Journal.layerMemory
        )
        const journal = yield* Journal.Journal
        const lines = exported.trimEnd().split("\n")
        const [entries, end] = [lines.slice(0, -1), lines.at(-1)!]
        expect(JSON.parse(end)).toEqual({ exportEnd: { sagaId: "cut", entries: 6, digest: expect.any(String) } })
        const refusal = (text: string) => Effect.flip(Journal.importNdjson(text))
        // Cut at every line boundary: each prefix still decodes and its chain verifies.
        for (let kept = 1; kept <= entries.length; kept++) {
          const error = yield* refusal(`${entries.slice(0, kept).join("\n")}\n`)
          expect(error).toMatchObject({ _tag: "JournalCorrupted", sagaId: "cut", seq: kept + 1 })
          expect((error as Journal.JournalCorrupted).reason).toContain(
            `the export has no end line after its ${kept} ${kept === 1 ? "entry" : "entries"}: it was cut short`
          )
        }
        const lastLinesLost = yield* refusal([...entries.slice(0, 4), end].join("\n"))
        expect(lastLinesLost).toMatchObject({ _tag: "JournalCorrupted", seq: 5 })
        expect((lastLinesLost as Journal.JournalCorrupted).reason).toContain(
          "the export's end line counts 6 entries, the file holds 4 entries: lines are missing"
        )
        const endFirst = yield* refusal([entries[0], end, ...entries.slice(1)].join("\n"))
        expect(endFirst).toMatchObject({ _tag: "JournalCorrupted", seq: 2 })
        expect((endFirst as Journal.JournalCorrupted).reason).toContain(
          "line 2 is the export's end line, yet lines follow it"
        )
        const otherDigest = end.replace(
          /"digest":"[0-9a-f]/,
          (found) => `${found.slice(0, -1)}${found.endsWith("0") ? "1" : "0"}`
        )
        expect(((yield* refusal([...entries, otherDigest].join("\n"))) as Journal.JournalCorrupted).reason).toContain(
          "the export's end line names another last hash than its last entry's"
        )
        const otherSaga = end.replace('"cut"', '"other"')
        expect(((yield* refusal([...entries, otherSaga].join("\n"))) as Journal.JournalCorrupted).reason).toContain(
          "the export's end line names another saga"
        )
        expect(yield* journal.read("cut")).toEqual([])
        expect(yield* Journal.importNdjson([...entries, end].join("\n"))).toMatchObject({
          sagaId: "cut",
          status: "completed",
          revision: 6
        })
      }).pipe(Effect.provide(layer))
    )

    it.effect("an import of an existing saga, a broken chain or a line that is not an entry writes nothing", () =>
      Effect.gen(function* () {
        const journal = yield* Journal.Journal
        yield* appendAll(journal, "kept", [saga("SAGA_STARTED"), step("INTENT", "tool:a#1")])
        const ndjson = yield* Journal.exportNdjson("kept")
        expect((yield* Effect.flip(Journal.importNdjson(ndjson)))._tag).toBe("ConcurrencyConflict")
        const broken = ndjson.replace('"INTENT"', '"EXECUTED"').replaceAll('"kept"', '"broken"')
        expect(yield* Effect.flip(Journal.importNdjson(broken))).toMatchObject({ _tag: "JournalCorrupted", seq: 1 })
        expect(yield* Effect.flip(Journal.importNdjson("{not json}\n"))).toMatchObject({ _tag: "JournalCorrupted" })
        expect(yield* journal.read("broken")).toEqual([])
      }).pipe(Effect.provide(layer))
    )

    it.effect(
      "an import whose saga id, step id, tool name or time the engine would not journal is JournalCorrupted naming its line, and writes nothing",
      () =>
        Effect.gen(function* () {
          const journal = yield* Journal.Journal
          const forged = (sagaId: string, toolName: string, options?: { at?: string; stepId?: string }) =>
            chainOf(sagaId, toolName, options)
              .map((entry) => JSON.stringify(entry))
              .join("\n")
          for (const [sagaId, toolName, seq, reason, options] of [
            [
              "forged\n\u001b[31mFORGED",
              "tool",
              1,
              "its saga id cannot be journaled: it holds a control character (U+000A) at index 6"
            ],
            [
              "x".repeat(Saga.MAX_JOURNAL_ID_BYTES + 1),
              "tool",
              1,
              "its saga id cannot be journaled: it is 1025 UTF-8 bytes"
            ],
            ["forged-tool", "billing/charge", 2, 'its tool name cannot be journaled: it holds "/" at index 7'],
            // Ids `Saga.run` refuses: the saga would be listed, even approved, and never run again.
            ["..", "tool", 1, 'line 1: its saga id cannot be journaled: it is "..", which a URL takes as a step'],
            [".", "tool", 1, 'line 1: its saga id cannot be journaled: it is ".", which a URL takes as a step'],
            [
              "x/compensate-effect",
              "tool",
              1,
              'line 1: its saga id cannot be journaled: it ends with "/compensate-effect" but names no effect before it'
            ],
            [
              "../tool:a#1/compensate-effect",
              "tool",
              1,
              'line 1: its saga id cannot be journaled: it is the explicit undo\'s run of a step of saga ".."'
            ],
            [
              "order-1/tool:a#1/compensate-effect",
              "tool",
              2,
              'line 2: its step id cannot be journaled: it is not the step "tool:a#1" whose undo this run is',
              { stepId: "tool:b#1" }
            ],
            // A step id of another tool than the entry's, or not of the engine's shape.
            [
              "forged-step",
              "otherTool",
              2,
              'line 2: its step id cannot be journaled: it is not a step of the entry\'s tool "otherTool"',
              { stepId: "outTool:1a4a03120502f367#1" }
            ],
            ["forged-step", "tool", 2, "it does not end with its occurrence (#1, #2, …)", { stepId: "tool:a" }],
            ["forged-step", "tool", 2, 'its key cannot be one: it holds "/" at index 1', { stepId: "tool:a/b#1" }],
            // A time the engine would not have written.
            [
              "forged-time",
              "tool",
              1,
              'line 1: its time cannot be journaled: "yesterday" is not an ISO-8601',
              { at: "yesterday" }
            ],
            ["forged-time", "tool", 1, "is not an ISO-8601 UTC time", { at: "2024-01-01T00:00:00Z" }],
            ["forged-time", "tool", 1, "is not an ISO-8601 UTC time", { at: "2024-02-30T00:00:00.000Z" }]
          ] as const) {
            const error = yield* Effect.flip(Journal.importNdjson(forged(sagaId, toolName, options)))
            expect(error).toMatchObject({ _tag: "JournalCorrupted", seq })
            expect((error as Journal.JournalCorrupted).reason, sagaId).toContain(reason)
            expect(yield* journal.read(sagaId)).toEqual([])
          }
          // What the engine journals imports: a key of its caller's (it may hold `:` and `#`), an explicit undo's run.
          const endOf = (entries: ReadonlyArray<Journal.Entry>) =>
            JSON.stringify({
              exportEnd: { sagaId: entries[0]!.sagaId, entries: entries.length, digest: entries.at(-1)!.hash }
            })
          for (const [sagaId, toolName, stepId] of [
            ["keyed", "ns:tool", "ns:tool:a:b#c#12"],
            ["order-1/tool:a#1/compensate-effect", "tool", "tool:a#1"]
          ] as const) {
            const entries = chainOf(sagaId, toolName, { stepId })
            const text = [...entries.map((entry) => JSON.stringify(entry)), endOf(entries)].join("\n")
            expect(yield* Journal.importNdjson(text)).toMatchObject({ sagaId, revision: 2 })
          }
        }).pipe(Effect.provide(layer))
    )

    it.effect(
      "prune deletes sagas completed or compensated before the date, nothing unfinished, nothing compensation_failed",
      () =>
        Effect.gen(function* () {
          const journal = yield* Journal.Journal
          yield* TestClock.setTime(Date.UTC(2024, 0, 1))
          yield* appendAll(journal, "prune-done", [saga("SAGA_STARTED"), saga("SAGA_COMPLETED")])
          yield* appendAll(journal, "prune-failed", [saga("SAGA_STARTED"), saga("SAGA_COMPENSATION_FAILED")])
          yield* appendAll(journal, "prune-waiting", [saga("SAGA_STARTED"), saga("SAGA_AWAITING_APPROVAL")])
          yield* appendAll(journal, "prune-unknown", [saga("SAGA_STARTED"), saga("SAGA_NEEDS_ATTENTION")])
          yield* appendAll(journal, "prune-running", [saga("SAGA_STARTED"), step("INTENT", "a")])
          yield* TestClock.setTime(Date.UTC(2024, 0, 3))
          yield* appendAll(journal, "prune-recent", [saga("SAGA_STARTED"), saga("SAGA_COMPENSATED")])
          // Finished, but someone holds its lease (an explicit undo of one of its steps, say): kept for now.
          yield* TestClock.setTime(Date.UTC(2024, 0, 1))
          yield* appendAll(journal, "prune-leased", [saga("SAGA_STARTED"), saga("SAGA_COMPLETED")])
          yield* journal.claim("prune-leased", { owner: "undoer", ttlMillis: 3 * 86_400_000 })
          yield* TestClock.setTime(Date.UTC(2024, 0, 3))
          // The dry run lists what prune deletes, and deletes nothing.
          const listed = yield* Journal.prunable("2024-01-02T00:00:00.000Z")
          // A compensation that failed may have left an effect live: its saga is the record of it.
          expect(listed.filter((id) => id.startsWith("prune-")).sort()).toEqual(["prune-done"])
          expect(ids(yield* journal.list(), "prune-")).toHaveLength(7)
          const pruned = yield* journal.prune("2024-01-02T00:00:00.000Z")
          expect(pruned.filter((id) => id.startsWith("prune-")).sort()).toEqual(["prune-done"])
          yield* journal.release("undoer")
          expect(yield* journal.prune("2024-01-02T00:00:00.000Z")).toContain("prune-leased")
          const left = ids(yield* journal.list(), "prune-").sort()
          expect(left).toEqual(["prune-failed", "prune-recent", "prune-running", "prune-unknown", "prune-waiting"])
          expect(yield* journal.read("prune-done")).toEqual([])
        }).pipe(Effect.provide(layer))
    )

    it.effect(
      "prune compares times, not their text: a zone, an expanded year or a time past 9999 is read as a time",
      () =>
        Effect.gen(function* () {
          const journal = yield* Journal.Journal
          const done = (sagaId: string) => appendAll(journal, sagaId, [saga("SAGA_STARTED"), saga("SAGA_COMPLETED")])
          const pruned = (before: string) =>
            Effect.map(journal.prune(before), (ids) => ids.filter((id) => id.startsWith("cut-")).sort())
          yield* TestClock.setTime(Date.UTC(2024, 0, 1))
          yield* done("cut-a")
          // 01:00 at +02:00 is 23:00 the day before in UTC: before the saga's update, so nothing is pruned.
          expect(yield* pruned("2024-01-01T01:00+02:00")).toEqual([])
          expect(yield* pruned("+002024-01-01T00:00:00.001Z")).toEqual(["cut-a"])
          yield* done("cut-b")
          // The update was at 00:00:00.000: before 00:00:00.0001, after the fraction is rounded up.
          expect(yield* pruned("2024-01-01T00:00:00.0001Z")).toEqual(["cut-b"])
          yield* done("cut-c")
          expect(yield* pruned(new Date(8.64e15).toISOString())).toEqual(["cut-c"])
        }).pipe(Effect.provide(layer))
    )

    it.effect("prune of something that is not a time fails with JournalError and deletes nothing", () =>
      Effect.gen(function* () {
        const journal = yield* Journal.Journal
        yield* TestClock.setTime(Date.UTC(2024, 0, 1))
        yield* appendAll(journal, "cut-kept", [saga("SAGA_STARTED"), saga("SAGA_COMPLETED")])
        for (const before of ["not a date", "", "2024-02-30", "2025-01-31T12:00:00"]) {
          const error = yield* Effect.flip(journal.prune(before))
          expect(error).toBeInstanceOf(Journal.JournalError)
          expect(error).toMatchObject({
            operation: "prune",
            reason:
              before === "2025-01-31T12:00:00"
                ? `"${before}" names no zone: add one (2025-01-31T12:00:00Z for UTC, 2025-01-31T13:00+01:00): without it, each host would read it in its own local time`
                : `${JSON.stringify(before)} is not an ISO-8601 time: a date (2025-01-31) or a date and time with its zone (2025-01-31T12:00:00Z, 2025-01-31T13:00+01:00)`
          })
        }
        expect(Option.isSome(yield* journal.get("cut-kept"))).toBe(true)
      }).pipe(Effect.provide(layer))
    )

    describe("prune and the runs of explicit undos (Saga.compensateEffect)", () => {
      const sagas = Saga.layer.pipe(Layer.provideMerge(Layer.merge(layer, Approval.layerMemory)))
      const runOf = (effectId: string) => `${effectId}/compensate-effect`
      /** A booking whose undos are counted: each call books anew, with a result of its own. */
      const booking = () => {
        const cancelled: Array<string> = []
        let booked = 0
        const tool = Compensable.make({
          name: "book",
          input: Schema.String,
          success: Schema.String,
          execute: (room) => Effect.sync(() => `booking-${room}-${++booked}`),
          compensate: (ctx) => Effect.sync(() => cancelled.push(ctx.result))
        })
        return { cancelled, tool }
      }
      const wire = Compensable.make({
        name: "wire",
        input: Schema.String,
        success: Schema.String,
        reversibility: "irreversible",
        execute: (to) => Effect.succeed(`wire-${to}`)
      })
      const effectIdOf = (sagaId: string) => Effect.map(Saga.status(sagaId), (status) => status.steps[0]!.effectId)

      it.effect(
        "a saga pruned takes its explicit undo's run with it, updated later or not: a new saga under its id is undone anew",
        () =>
          Effect.gen(function* () {
            const journal = yield* Journal.Journal
            const { cancelled, tool } = booking()
            yield* TestClock.setTime(Date.UTC(2024, 0, 1))
            expect((yield* Saga.run("reused-trip", tool("101")))._tag).toBe("Completed")
            const effectId = yield* effectIdOf("reused-trip")
            yield* TestClock.setTime(Date.UTC(2024, 0, 3))
            expect(yield* Saga.compensateEffect(effectId)).toMatchObject({ _tag: "Settled", outcome: "completed" })

            // The cutoff falls between the saga's last update and its run's.
            const pruned = yield* journal.prune("2024-01-02T00:00:00.000Z")
            expect(pruned.filter((id) => id.startsWith("reused-trip")).sort()).toEqual(["reused-trip", runOf(effectId)])
            expect(Option.isNone(yield* journal.get(runOf(effectId)))).toBe(true)
            expect(yield* journal.read(runOf(effectId))).toEqual([])

            // The id reused books again, under the same effect id: nothing has undone this booking yet.
            expect((yield* Saga.run("reused-trip", tool("101")))._tag).toBe("Completed")
            expect(yield* effectIdOf("reused-trip")).toBe(effectId)
            const report = yield* Saga.compensate("reused-trip")
            expect(report.undone.map(({ detail, outcome }) => ({ outcome, detail }))).toEqual([
              { outcome: "completed", detail: undefined }
            ])
            expect(cancelled).toEqual(["booking-101-1", "booking-101-2"])
            expect(yield* Saga.compensateEffect(effectId)).toMatchObject({
              _tag: "Settled",
              outcome: "completed",
              detail: "settled by the saga's compensation"
            })
            expect(cancelled).toHaveLength(2)
          }).pipe(Effect.provide(sagas))
      )

      it.effect(
        "an explicit undo's run is never pruned while its saga stays, however old: asking again reads its answer and undoes nothing",
        () =>
          Effect.gen(function* () {
            const journal = yield* Journal.Journal
            const { cancelled, tool } = booking()
            yield* TestClock.setTime(Date.UTC(2024, 0, 1))
            const result = yield* Saga.run("open-trip", Effect.zipRight(tool("102"), wire("x")))
            assert(result._tag === "AwaitingApproval")
            const effectId = yield* effectIdOf("open-trip")
            const answer = yield* Saga.compensateEffect(effectId)
            expect(answer).toMatchObject({ _tag: "Settled", outcome: "completed" })

            yield* TestClock.setTime(Date.UTC(2024, 1, 10))
            const pruned = yield* journal.prune("2024-02-01T00:00:00.000Z")
            expect(pruned.filter((id) => id.startsWith("open-trip"))).toEqual([])
            expect(Option.isSome(yield* journal.get(runOf(effectId)))).toBe(true)
            expect(yield* Saga.compensateEffect(effectId)).toEqual(answer)
            expect(cancelled).toEqual(["booking-102-1"])

            // The saga's own compensation takes the answer over; finished, the saga goes with its run.
            yield* Saga.reject("open-trip", result.request.stepId, { by: "bob", reason: "no" })
            expect(cancelled).toEqual(["booking-102-1"])
            expect((yield* Saga.status("open-trip")).status).toBe("compensated")
            yield* TestClock.setTime(Date.UTC(2024, 1, 20))
            const after = yield* journal.prune("2024-02-15T00:00:00.000Z")
            expect(after.filter((id) => id.startsWith("open-trip")).sort()).toEqual(["open-trip", runOf(effectId)])
          }).pipe(Effect.provide(sagas))
      )

      it.effect(
        "a saga with a run still open is not pruned, nor its runs; a run is found by its saga's steps, its saga id holding a / or not",
        () =>
          Effect.gen(function* () {
            const journal = yield* Journal.Journal
            const done = [saga("SAGA_STARTED"), step("INTENT", "tool:k#1"), step("EXECUTED", "tool:k#1")]
            const runDone = [saga("SAGA_STARTED"), saga("SAGA_COMPLETED")]
            yield* TestClock.setTime(Date.UTC(2024, 0, 1))
            // Held: its run awaits an approval.
            yield* appendAll(journal, "held-run", [...done, saga("SAGA_COMPLETED")])
            yield* appendAll(journal, "held-run/tool:k#1/compensate-effect", [
              saga("SAGA_STARTED"),
              saga("SAGA_AWAITING_APPROVAL")
            ])
            // "slash/a" has the step; "slash" does not, and stays: the run goes with "slash/a".
            yield* appendAll(journal, "slash/a", [...done, saga("SAGA_COMPLETED")])
            yield* appendAll(journal, "slash", [saga("SAGA_STARTED"), step("INTENT", "b")])
            yield* appendAll(journal, "slash/a/tool:k#1/compensate-effect", runDone)
            // A run whose saga is gone (pruned before runs went with their sagas): the ordinary rule.
            yield* appendAll(journal, "orphan/tool:k#1/compensate-effect", runDone)
            // A run whose saga, still running, journaled the step: kept.
            yield* appendAll(journal, "running-run", done)
            yield* appendAll(journal, "running-run/tool:k#1/compensate-effect", runDone)
            yield* TestClock.setTime(Date.UTC(2024, 0, 3))
            const ours = ["held-run", "slash", "orphan", "running-run"]
            const mine = (id: string) => ours.some((prefix) => id.startsWith(prefix))
            const listed = (yield* Journal.prunable("2024-01-02T00:00:00.000Z")).filter(mine).sort()
            const pruned = yield* journal.prune("2024-01-02T00:00:00.000Z")
            expect(pruned.filter(mine).sort()).toEqual(listed)
            expect(pruned.filter(mine).sort()).toEqual([
              "orphan/tool:k#1/compensate-effect",
              "slash/a",
              "slash/a/tool:k#1/compensate-effect"
            ])
            expect(
              ids(yield* journal.list(), "")
                .filter(mine)
                .sort()
            ).toEqual([
              "held-run",
              "held-run/tool:k#1/compensate-effect",
              "running-run",
              "running-run/tool:k#1/compensate-effect",
              "slash"
            ])
          }).pipe(Effect.provide(layer))
      )
    })

    // Lease times come from the store's clock: Effect's on memory and SQLite, the database's on
    // PostgreSQL. So these cases never wait for a lease to lapse: a holder with `ttlMillis: 0`
    // holds a lease that has lapsed the moment it is taken.
    describe("leases", () => {
      const a: Journal.Holder = { owner: "worker-a", ttlMillis: 3_600_000 }
      const b: Journal.Holder = { owner: "worker-b", ttlMillis: 3_600_000 }
      const lapsing = (owner: string): Journal.Holder => ({ owner, ttlMillis: 0 })
      const leaseOf = (journal: Journal.Journal["Type"], sagaId: string) =>
        Effect.map(journal.get(sagaId), (record) => Option.getOrThrow(record).lease)
      const positionOf = (journal: Journal.Journal["Type"], sagaId: string) =>
        Effect.map(journal.get(sagaId), (record) => {
          const { digest, revision } = Option.getOrThrow(record)
          return { revision, digest }
        })

      it.effect("an append under a holder takes the lease; another holder's append is refused and writes nothing", () =>
        Effect.gen(function* () {
          const journal = yield* Journal.Journal
          yield* journal.append("lease-held", Journal.empty, [saga("SAGA_STARTED"), step("INTENT", "a")], a)
          const lease = yield* leaseOf(journal, "lease-held")
          expect(lease?.owner).toBe("worker-a")
          expect(Number.isNaN(Date.parse(lease!.expiresAt))).toBe(false)
          const position = yield* positionOf(journal, "lease-held")
          const refused = yield* Effect.flip(journal.append("lease-held", position, [step("EXECUTED", "a")], b))
          expect(refused).toMatchObject({ _tag: "LeaseHeld", owner: "worker-a", expiresAt: lease!.expiresAt })
          const anonymous = yield* Effect.flip(journal.append("lease-held", position, [step("EXECUTED", "a")]))
          expect(anonymous._tag).toBe("LeaseHeld")
          expect((yield* journal.read("lease-held")).length).toBe(2)
          yield* journal.append("lease-held", position, [step("EXECUTED", "a")], a)
          expect((yield* leaseOf(journal, "lease-held"))?.owner).toBe("worker-a")
        }).pipe(Effect.provide(layer))
      )

      it.effect("a lapsed lease is anybody's: the next holder's append takes it over", () =>
        Effect.gen(function* () {
          const journal = yield* Journal.Journal
          const [started] = yield* journal.append(
            "lease-lapsed",
            Journal.empty,
            [saga("SAGA_STARTED")],
            lapsing("worker-a")
          )
          yield* journal.append("lease-lapsed", { revision: 1, digest: started!.hash }, [step("INTENT", "a")], b)
          expect((yield* leaseOf(journal, "lease-lapsed"))?.owner).toBe("worker-b")
        }).pipe(Effect.provide(layer))
      )

      it.effect("the append that halts or ends the saga drops the lease; the one that resumes it takes it again", () =>
        Effect.gen(function* () {
          const journal = yield* Journal.Journal
          yield* journal.append("lease-drop", Journal.empty, [saga("SAGA_STARTED"), saga("SAGA_SUSPENDED")], a)
          expect(yield* leaseOf(journal, "lease-drop")).toBeNull()
          yield* journal.append("lease-drop", yield* positionOf(journal, "lease-drop"), [saga("SAGA_RESUMED")], b)
          expect((yield* leaseOf(journal, "lease-drop"))?.owner).toBe("worker-b")
          yield* journal.append("lease-drop", yield* positionOf(journal, "lease-drop"), [saga("SAGA_COMPLETED")], b)
          expect(yield* leaseOf(journal, "lease-drop")).toBeNull()
        }).pipe(Effect.provide(layer))
      )

      it.effect(
        "an append that sets no status keeps the writer's lease whatever the saga's status; one that sets an end drops it",
        () =>
          Effect.gen(function* () {
            const journal = yield* Journal.Journal
            // A compensation again of a saga whose compensation failed: its step entries set no status.
            yield* appendAll(journal, "lease-again", [
              saga("SAGA_STARTED"),
              step("INTENT", "a"),
              step("EXECUTED", "a"),
              saga("SAGA_COMPENSATING"),
              saga("SAGA_COMPENSATION_FAILED")
            ])
            const compensating = step("COMPENSATING", "a")
            yield* journal.append("lease-again", yield* positionOf(journal, "lease-again"), [compensating], a)
            expect((yield* leaseOf(journal, "lease-again"))?.owner).toBe("worker-a")
            expect((yield* Effect.flip(journal.claim("lease-again", b)))._tag).toBe("LeaseHeld")
            const position = yield* positionOf(journal, "lease-again")
            expect((yield* Effect.flip(journal.append("lease-again", position, [saga("SAGA_COMPENSATED")])))._tag).toBe(
              "LeaseHeld"
            )
            yield* journal.append("lease-again", position, [step("COMPENSATED", "a"), saga("SAGA_COMPENSATED")], a)
            expect(yield* leaseOf(journal, "lease-again")).toBeNull()
          }).pipe(Effect.provide(layer))
      )

      it.effect(
        "a worker that lost its lease cannot write: LeaseHeld while the saga stands still, a conflict once it moved",
        () =>
          Effect.gen(function* () {
            const journal = yield* Journal.Journal
            const [started] = yield* journal.append(
              "lease-late",
              Journal.empty,
              [saga("SAGA_STARTED")],
              lapsing("worker-a")
            )
            const seenByA = { revision: 1, digest: started!.hash }
            yield* journal.claim("lease-late", b)
            const stillHeld = yield* Effect.flip(journal.append("lease-late", seenByA, [step("INTENT", "a")], a))
            expect(stillHeld._tag).toBe("LeaseHeld")
            yield* journal.append("lease-late", seenByA, [step("INTENT", "b")], b)
            const moved = yield* Effect.flip(journal.append("lease-late", seenByA, [step("INTENT", "a")], a))
            expect(moved).toMatchObject({ _tag: "ConcurrencyConflict", expectedRevision: 1, actualRevision: 2 })
            expect((yield* journal.read("lease-late")).map((entry) => entry.stepId)).toEqual([null, "b"])
          }).pipe(Effect.provide(layer))
      )

      it.effect("claim: none for an unknown saga, the lease when free or the holder's own, LeaseHeld otherwise", () =>
        Effect.gen(function* () {
          const journal = yield* Journal.Journal
          expect(yield* journal.claim("lease-nobody", a)).toEqual(Option.none())
          yield* journal.append("lease-claim", Journal.empty, [saga("SAGA_STARTED"), saga("SAGA_SUSPENDED")])
          const claimed = yield* journal.claim("lease-claim", a)
          expect(Option.getOrThrow(claimed).lease?.owner).toBe("worker-a")
          expect(Option.isSome(yield* journal.claim("lease-claim", a))).toBe(true)
          const refused = yield* Effect.flip(journal.claim("lease-claim", b))
          expect(refused).toMatchObject({ _tag: "LeaseHeld", sagaId: "lease-claim", owner: "worker-a" })
          yield* journal.claim("lease-claim", lapsing("worker-a"))
          expect(Option.getOrThrow(yield* journal.claim("lease-claim", b)).lease?.owner).toBe("worker-b")
        }).pipe(Effect.provide(layer))
      )

      it.effect(
        "claimLapsed takes sagas left running, compensating or suspended, never one twice, at most `limit`",
        () =>
          Effect.gen(function* () {
            const journal = yield* Journal.Journal
            // Sagas other tests left behind in a store that outlives them are swept aside first.
            const sweeper: Journal.Holder = { owner: "sweeper", ttlMillis: 3_600_000 }
            while ((yield* journal.claimLapsed(sweeper, 1000)).length > 0) {}
            yield* appendAll(journal, "lapsed-running", [saga("SAGA_STARTED"), step("INTENT", "a")])
            yield* journal.append("lapsed-leased", Journal.empty, [saga("SAGA_STARTED")], a)
            yield* journal.append("lapsed-expired", Journal.empty, [saga("SAGA_STARTED")], lapsing("worker-a"))
            yield* appendAll(journal, "lapsed-compensating", [saga("SAGA_STARTED"), saga("SAGA_COMPENSATING")])
            yield* appendAll(journal, "lapsed-suspended", [saga("SAGA_STARTED"), saga("SAGA_SUSPENDED")])
            for (const halted of ["SAGA_AWAITING_APPROVAL", "SAGA_NEEDS_ATTENTION", "SAGA_COMPLETED"] as const) {
              yield* appendAll(journal, `lapsed-${halted}`, [saga("SAGA_STARTED"), saga(halted)])
            }

            const first = yield* journal.claimLapsed(b, 2)
            const second = yield* journal.claimLapsed(b, 10)
            expect(first.length).toBe(2)
            const claimed = [...first, ...second]
            expect(claimed.map((record) => record.sagaId).sort()).toEqual([
              "lapsed-compensating",
              "lapsed-expired",
              "lapsed-running",
              "lapsed-suspended"
            ])
            expect(claimed.every((record) => record.lease?.owner === "worker-b")).toBe(true)
            expect(yield* journal.claimLapsed(b, 10)).toEqual([])
          }).pipe(Effect.provide(layer))
      )

      it.effect("renew extends every lease of its owner; release drops one or all of them", () =>
        Effect.gen(function* () {
          const journal = yield* Journal.Journal
          const short: Journal.Holder = { owner: "renewer", ttlMillis: 1000 }
          for (const id of ["renew-1", "renew-2"]) {
            yield* journal.append(id, Journal.empty, [saga("SAGA_STARTED")], short)
          }
          const before = Date.parse((yield* leaseOf(journal, "renew-1"))!.expiresAt)
          expect(yield* journal.renew({ owner: "renewer", ttlMillis: 3_600_000 })).toBe(2)
          const after = Date.parse((yield* leaseOf(journal, "renew-1"))!.expiresAt)
          expect(after - before).toBeGreaterThanOrEqual(3_599_000 - 60_000)
          yield* journal.release("renewer", "renew-1")
          expect(yield* leaseOf(journal, "renew-1")).toBeNull()
          expect((yield* leaseOf(journal, "renew-2"))?.owner).toBe("renewer")
          yield* journal.release("somebody-else")
          expect((yield* leaseOf(journal, "renew-2"))?.owner).toBe("renewer")
          yield* journal.release("renewer")
          expect(yield* leaseOf(journal, "renew-2")).toBeNull()
          expect(yield* journal.renew(short)).toBe(0)
        }).pipe(Effect.provide(layer))
      )
    })
  })

const ids = (records: ReadonlyArray<Journal.SagaRecord>, prefix: string) =>
  records.map((record) => record.sagaId).filter((id) => id.startsWith(prefix))

/**
 * A saga's first two entries, chained as a store would (`SAGA_STARTED`, an `INTENT` of `toolName`,
 * step `stepId`, both at `at`), as imported text would hold them.
 */
const chainOf = (
  sagaId: string,
  toolName = "tool",
  { at = "2024-01-01T00:00:00.000Z", stepId = `${toolName}:a#1` }: { at?: string; stepId?: string } = {}
) => {
  const first = {
    sagaId,
    seq: 1,
    stepId: null,
    toolName: null,
    phase: "SAGA_STARTED" as const,
    input: null,
    payload: null,
    at
  }
  const intent = {
    ...step("INTENT", stepId),
    toolName,
    sagaId,
    seq: 2,
    payload: '{"idempotencyKey":"k","attempt":1}',
    at
  }
  const firstHash = Journal.hashEntry(Journal.empty.digest, first)
  return [
    { ...first, hash: firstHash },
    { ...intent, hash: Journal.hashEntry(firstHash, intent) }
  ]
}
