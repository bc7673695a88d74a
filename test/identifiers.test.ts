import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, assert, describe, expect, it } from "@effect/vitest"
import Database from "better-sqlite3"
import { Cause, Effect, Either, Fiber, FastCheck as fc, Layer, Option, Schema, TestClock } from "effect"
import { Approval, Compensable, Journal, Saga, SagaDefinition, SagaError, SqlJournal, Toolkit } from "../src/index.js"
import * as Testing from "../src/Testing.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-identifiers-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

describe("identifiers", () => {
  describe.each(stores())("refused at every entry point, before anything is journaled: %s", (_, store) => {
    describe.each(entryPoints)("%s", (_, kind, maxBytes, call) => {
      it.effect.each(badIdentifiers(maxBytes))("%s", ([, id, reason]) => {
        const { filename, layer } = store()
        return Effect.gen(function* () {
          const { runs, tool } = counted()
          const error = yield* Effect.flip(call(id, tool))
          assert(error instanceof SagaError.InvalidIdentifier, `expected InvalidIdentifier, got ${String(error)}`)
          expect(error).toMatchObject({ _tag: "InvalidIdentifier", kind })
          expect(error.reason).toMatch(reason)
          expect(error.message.length).toBeLessThan(300)
          expect(runs).toEqual([])
          const journal = yield* Journal.Journal
          expect(yield* journal.list()).toEqual([])
          if (filename !== undefined) expect(rowsIn(filename)).toEqual({ sagas: 0, entries: 0 })
        }).pipe(Effect.provide(layer))
      })
    })
  })

  it.effect("a saga id of exactly MAX_SAGA_ID_BYTES runs; one byte more is refused", () =>
    Effect.gen(function* () {
      const { runs, tool } = counted()
      const longest = "é".repeat(Saga.MAX_SAGA_ID_BYTES / 2)
      expect((yield* Saga.run(longest, tool("A-1")))._tag).toBe("Completed")
      expect((yield* Saga.status(longest)).status).toBe("completed")
      const error = yield* Effect.flip(Saga.run(`${longest}x`, tool("B-2")))
      expect(error).toMatchObject({
        _tag: "InvalidIdentifier",
        reason: `it is ${Saga.MAX_SAGA_ID_BYTES + 1} UTF-8 bytes, over the limit of ${Saga.MAX_SAGA_ID_BYTES}`
      })
      expect(runs).toEqual(["A-1"])
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect('the saga ids "." and ".." are refused: a URL takes them as steps of its path', () =>
    Effect.gen(function* () {
      const { runs, tool } = counted()
      for (const sagaId of [".", ".."]) {
        const error = yield* Effect.flip(Saga.run(sagaId, tool("A-1")))
        expect(error).toMatchObject({ _tag: "InvalidIdentifier", kind: "saga id" })
        expect(error.message).toContain("which a URL takes as a step of its path")
      }
      expect((yield* Saga.run("...", tool("A-1")))._tag).toBe("Completed")
      expect(runs).toEqual(["A-1"])
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("the message shows an identifier escaped and cut short, never whole", () =>
    Effect.gen(function* () {
      const { tool } = counted()
      const result = yield* Effect.either(Saga.run(`a\u001b[31m${"x".repeat(1 << 20)}`, tool("A-1")))
      assert(Either.isLeft(result), "the id was accepted")
      expect(result.left.message).toBe(
        `invalid saga id ${JSON.stringify(`a\u001b[31m${"x".repeat(58)}`)}…: it holds a control character (U+001B) at index 1; nothing was journaled or run`
      )
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("two saga ids that differ only in a lone surrogate are both refused, as the issue found them", () =>
    Effect.gen(function* () {
      const { filename, layer } = sqliteStore()
      yield* Effect.gen(function* () {
        const { runs, tool } = counted()
        for (const id of ["sur\uD800", "sur\uDBFF"]) {
          expect(yield* Effect.flip(Saga.run(id, tool("A-1")))).toMatchObject({
            _tag: "InvalidIdentifier",
            reason: `it is not well-formed Unicode: a lone surrogate (${id === "sur\uD800" ? "U+D800" : "U+DBFF"}) at index 3`
          })
        }
        expect(runs).toEqual([])
      }).pipe(Effect.provide(layer))
      expect(rowsIn(filename!)).toEqual({ sagas: 0, entries: 0 })
    })
  )

  it.effect("the explicit undo run of a step whose saga id is at its limit can still be read and commanded", () =>
    Effect.gen(function* () {
      const { tool } = counted()
      const sagaId = "s".repeat(Saga.MAX_SAGA_ID_BYTES)
      const key = "k".repeat(Compensable.MAX_STEP_KEY_BYTES)
      expect((yield* Saga.run(sagaId, tool("A-1", { key })))._tag).toBe("Completed")
      const [step] = (yield* Saga.status(sagaId)).steps
      const answer = yield* Saga.compensateEffect(step!.effectId)
      assert(answer._tag === "Settled")
      expect(Buffer.byteLength(answer.runId)).toBeGreaterThan(Saga.MAX_SAGA_ID_BYTES)
      expect(Buffer.byteLength(answer.runId)).toBeLessThanOrEqual(Saga.MAX_JOURNAL_ID_BYTES)
      expect((yield* Saga.status(answer.runId)).status).toBe("completed")
    }).pipe(Effect.provide(Testing.layer))
  )

  describe("what an operator's command names", () => {
    it.effect("a blank or empty by is refused on a step awaiting approval, as the CLI refuses a blank --as", () =>
      Effect.gen(function* () {
        const { sagaId, stepId } = yield* awaitingWire("blank-by")
        const journal = yield* Journal.Journal
        const before = yield* journal.read(sagaId)
        for (const by of ["", " ", "\u00a0\t "]) {
          const error = yield* Effect.flip(Saga.approve(sagaId, stepId, { by }))
          expect(error).toMatchObject({ _tag: "InvalidIdentifier", kind: "principal" })
          expect(error.message).toMatch(
            by === ""
              ? /: it is empty;/
              : /: it (is blank: it names no one|holds a control character \(U\+0009\) at index 1);/
          )
        }
        expect(yield* Effect.flip(Saga.reject(sagaId, stepId, { by: "  ", reason: "no" }))).toMatchObject({
          _tag: "InvalidIdentifier",
          kind: "principal",
          identifier: '"  "',
          reason: "it is blank: it names no one"
        })
        expect(yield* journal.read(sagaId)).toEqual(before)
        yield* Saga.approve(sagaId, stepId, { by: "ébène ✓ alice@example.com" })
        expect((yield* Saga.status(sagaId)).steps[0]!.state).toBe("approved")
      }).pipe(Effect.provide(Testing.layer))
    )

    it.effect("a step id with a terminal escape, or megabytes long, is refused with it escaped and cut", () =>
      Effect.gen(function* () {
        const { sagaId, stepId } = yield* awaitingWire("step-ids")
        const error = yield* Effect.flip(
          Saga.approve(sagaId, `${stepId}\u001b[2J\n${"x".repeat(5_000_000)}`, { by: "al" })
        )
        expect(error.message).toBe(
          `invalid step id ${JSON.stringify(`${stepId}\u001b[2J\n${"x".repeat(64 - stepId.length - 5)}`)}…: it holds a control character (U+001B) at index ${stepId.length}; nothing was journaled or run`
        )
        expect(yield* Effect.flip(Saga.approve(sagaId, "a\uD800", { by: "al" }))).toMatchObject({
          kind: "step id",
          reason: "it is not well-formed Unicode: a lone surrogate (U+D800) at index 1"
        })
        expect((yield* Saga.status(sagaId)).steps[0]!.state).toBe("awaiting_approval")
      }).pipe(Effect.provide(Testing.layer))
    )

    it.effect("not found names a long id cut to 64 characters, and a bidi override escaped", () =>
      Effect.gen(function* () {
        const long = "a".repeat(Saga.MAX_JOURNAL_ID_BYTES)
        expect((yield* Effect.flip(Saga.status(long))).message).toBe(
          `no saga ${JSON.stringify("a".repeat(64))}… in the journal`
        )
        expect((yield* Effect.flip(Saga.status("\u202eevil"))).message).toBe('no saga "\\u202eevil" in the journal')
        expect((yield* Effect.flip(Saga.status("order-7"))).message).toBe("no saga order-7 in the journal")
        expect((yield* Effect.flip(Saga.compensateEffect(`${"b".repeat(1000)}/pay`))).message).toBe(
          `no effect ${JSON.stringify("b".repeat(64))}…: an effect id is a step's idempotency key, <sagaId>/<stepId>`
        )
        const { sagaId } = yield* awaitingWire("unknown-step")
        expect((yield* Effect.flip(Saga.approve(sagaId, "c".repeat(1000), { by: "al" }))).message).toBe(
          `refused for step ${JSON.stringify("c".repeat(64))}… of saga unknown-step: the saga has no such step`
        )
      }).pipe(Effect.provide(Testing.layer))
    )
  })

  describe("tool names", () => {
    it.effect.each([
      ["a lone surrogate", "reserve\uD800", /not well-formed Unicode/],
      ["empty", "", /empty/],
      ["a control character", "reserve\n", /control character \(U\+000A\)/],
      [
        "over MAX_TOOL_NAME_BYTES",
        "t".repeat(Compensable.MAX_TOOL_NAME_BYTES + 1),
        /129 UTF-8 bytes, over the limit of 128/
      ],
      ["holding a /", "billing/charge", /holds "\/" at index 7, which ends the saga id in effect ids/],
      [
        "over MAX_TOOL_NAME_BYTES as step ids write it",
        ":".repeat(43),
        /129 UTF-8 bytes as step ids write it \(each : and % as %3A, %25\), over the limit of 128/
      ]
    ] as const)("a tool whose name is %s is refused when its toolkit is built", ([, name, reason]) =>
      Effect.gen(function* () {
        const { runs, tool } = counted(name)
        const error = yield* Effect.flip(Layer.build(withToolkit(Toolkit.make({ tool }))).pipe(Effect.scoped))
        expect(error).toBeInstanceOf(Compensable.DeclarationError)
        expect(error.reason).toMatch(/^its name cannot be journaled: /)
        expect(error.reason).toMatch(reason)
        expect(error.message.length).toBeLessThan(300)
        expect(runs).toEqual([])
      })
    )

    it.effect("a tool whose name is refused is not run and journals nothing when a saga calls it", () =>
      Effect.gen(function* () {
        const { runs, tool } = counted("reserve\uD800")
        const named = Effect.succeed("r-1").pipe(
          Compensable.withCompensation({ name: "", success: Schema.String, compensate: () => Effect.void })
        )
        for (const [sagaId, program] of [
          ["bad-name", tool("A-1")],
          ["no-name", named]
        ] as const) {
          const result = yield* Saga.run(sagaId, program)
          assert(result._tag === "Compensated")
          expect(Option.getOrUndefined(Cause.dieOption(result.cause))).toBeInstanceOf(Compensable.DeclarationError)
          const entries = yield* Effect.flatMap(Journal.Journal, (journal) => journal.read(sagaId))
          expect(entries.filter((entry) => entry.stepId !== null)).toEqual([])
        }
        expect(runs).toEqual([])
      }).pipe(Effect.provide(Testing.layer))
    )

    it.effect("a tool named in any well-formed script runs, and its chain verifies on SQLite", () =>
      Effect.gen(function* () {
        const { runs, tool } = counted("réserver-✓-🚀")
        const result = yield* Saga.run("tool-names", tool("A-1"))
        expect(result._tag).toBe("Completed")
        expect(runs).toEqual(["A-1"])
        expect(yield* Journal.verify("tool-names")).toMatchObject({ _tag: "Intact" })
      }).pipe(Effect.provide(sqliteStore().layer))
    )
  })

  describe("step keys", () => {
    it.effect.each(badIdentifiers(Compensable.MAX_STEP_KEY_BYTES))(
      "a call whose key is %s fails with InvalidIdentifier; the tool does not run and nothing is journaled for it",
      ([, key, reason]) =>
        Effect.gen(function* () {
          const { runs, tool } = counted()
          const undo = Effect.sync(() => `${runs.push("withCompensation")}`).pipe(
            Compensable.withCompensation({ name: "noted", key, success: Schema.String, compensate: () => Effect.void })
          )
          for (const call of [tool("A-1", { key }), undo]) {
            const result = yield* Saga.run("keys", Effect.flip(call))
            assert(result._tag === "Completed")
            expect(result.value).toBeInstanceOf(SagaError.InvalidIdentifier)
            expect(result.value).toMatchObject({ kind: "step key", reason: expect.stringMatching(reason) })
          }
          expect(runs).toEqual([])
          const entries = yield* Effect.flatMap(Journal.Journal, (journal) => journal.read("keys"))
          expect(entries.filter((entry) => entry.stepId !== null)).toEqual([])
        }).pipe(Effect.provide(Testing.layer))
    )

    it.effect("a key holding a / is refused: with it, two steps of two sagas could share an effect id", () =>
      Effect.gen(function* () {
        // Saga "a" with key "b/reserve:x", and saga "a/reserve:b" with key "x", would both have the
        // effect id (and forward idempotency key) "a/reserve:b/reserve:x#1".
        const { runs, tool } = counted()
        const result = yield* Saga.run("a", Effect.flip(tool("A-1", { key: "b/reserve:x" })))
        assert(result._tag === "Completed")
        expect(result.value).toMatchObject({
          _tag: "InvalidIdentifier",
          kind: "step key",
          reason: 'it holds "/" at index 1, which ends the saga id in effect ids'
        })
        expect(runs).toEqual([])
        expect(yield* Saga.run("keyed-colon", tool("A-1", { key: "b:x#1" }))).toMatchObject({ _tag: "Completed" })
      }).pipe(Effect.provide(Testing.layer))
    )

    it.effect(
      "a tool named with : and a key holding : never share a step id: concurrent calls replay in any order",
      () =>
        Effect.gen(function* () {
          const payCard = counted("pay:card")
          const pay = counted("pay")
          // `pay:card` keyed `x` and `pay` keyed `card:x` would both be `pay:card:x` with the name as it is.
          const program = (cardFirst: boolean) =>
            Effect.all(
              [
                Effect.zipRight(Effect.sleep(cardFirst ? "1 millis" : "20 millis"), payCard.tool("A", { key: "x" })),
                Effect.zipRight(Effect.sleep(cardFirst ? "20 millis" : "1 millis"), pay.tool("B", { key: "card:x" }))
              ],
              { concurrency: "unbounded" }
            )
          const first = yield* Effect.fork(Saga.run("colons", program(true)))
          yield* TestClock.adjust("1 second")
          expect((yield* Fiber.join(first))._tag).toBe("Completed")
          const replay = yield* Effect.fork(Saga.run("colons", program(false)))
          yield* TestClock.adjust("1 second")
          expect(yield* Fiber.join(replay)).toMatchObject({ _tag: "Completed", value: ["r-A", "r-B"] })
          expect((yield* Saga.status("colons")).steps.map((step) => [step.toolName, step.stepId])).toEqual([
            ["pay:card", "pay%3Acard:x#1"],
            ["pay", "pay:card:x#1"]
          ])
          expect([payCard.runs, pay.runs]).toEqual([["A"], ["B"]])
        }).pipe(Effect.provide(Testing.layer))
    )

    it.effect(
      "a saga journaled before 0.5.0 with steps of a tool named with : replays under its ids, those of a colliding key too",
      () =>
        Effect.gen(function* () {
          const payCard = counted("pay:card")
          const pay = counted("pay")
          const journal = yield* Journal.Journal
          // What an earlier version journaled: names as they are, one id numbered by arrival for both.
          const step = (stepId: string, toolName: string, input: string) =>
            (["INTENT", "EXECUTED"] as const).map(
              (phase): Journal.Draft => ({
                stepId,
                toolName,
                phase,
                input: JSON.stringify(input),
                payload: JSON.stringify(
                  phase === "INTENT"
                    ? { attempt: 1, idempotencyKey: `legacy-colon/${stepId}` }
                    : { result: `r-${input}` }
                )
              })
            )
          yield* journal.append("legacy-colon", Journal.empty, [
            { stepId: null, toolName: null, phase: "SAGA_STARTED", input: null, payload: null },
            ...step("pay:card:x#1", "pay", "B"),
            ...step("pay:card:x#2", "pay:card", "A")
          ])
          const program = Effect.zip(pay.tool("B", { key: "card:x" }), payCard.tool("A", { key: "x" }))
          const result = yield* Saga.run("legacy-colon", program)
          expect(result).toMatchObject({ _tag: "Completed", value: ["r-B", "r-A"] })
          expect([pay.runs, payCard.runs]).toEqual([[], []])
          expect((yield* Saga.status("legacy-colon")).steps.map((step) => step.stepId)).toEqual([
            "pay:card:x#1",
            "pay:card:x#2"
          ])
        }).pipe(Effect.provide(Testing.layer))
    )

    it.effect("Compensable.isStepError recognizes a refused key", () =>
      Effect.gen(function* () {
        const { tool } = counted()
        const result = yield* Saga.run("keyed", Effect.flip(tool("A-1", { key: "" })))
        assert(result._tag === "Completed")
        expect(Compensable.isStepError(result.value)).toBe(true)
      }).pipe(Effect.provide(Testing.layer))
    )
  })

  describe("a well-formed non-ASCII id on SQLite", () => {
    it.effect("runs, compensates and reopens end to end, and its chain verifies", () =>
      Effect.gen(function* () {
        const { filename, layer } = sqliteStore()
        const sagaId = "ébène-✓-𝄞"
        const undone: Array<string> = []
        const reserve = Compensable.make({
          name: "réserver",
          input: Schema.String,
          success: Schema.String,
          execute: (sku) => Effect.succeed(`rés-${sku}`),
          compensate: ({ result }) => Effect.sync(() => undone.push(result))
        })
        yield* Effect.gen(function* () {
          const result = yield* Saga.run(sagaId, Effect.zipRight(reserve("été", { key: "clé-ü" }), Effect.fail("non")))
          expect(result._tag).toBe("Compensated")
          expect(undone).toEqual(["rés-été"])
          const status = yield* Saga.status(sagaId)
          expect(status).toMatchObject({ sagaId, status: "compensated" })
          expect(status.steps.map((step) => step.stepId)).toEqual(["réserver:clé-ü#1"])
        }).pipe(Effect.provide(layer))

        // A fresh connection to the file reads back exactly the id and a chain that verifies.
        yield* Effect.gen(function* () {
          const journal = yield* Journal.Journal
          expect((yield* journal.list()).map((record) => record.sagaId)).toEqual([sagaId])
          const verification = yield* Journal.verify(sagaId)
          expect(verification).toMatchObject({ _tag: "Intact" })
          expect((yield* journal.read(sagaId)).every((entry) => entry.sagaId === sagaId)).toBe(true)
        }).pipe(Effect.provide(SqlJournal.layerSqlite({ filename: filename! })))
      })
    )

    const files = { runs: 0 }
    it.effect.prop(
      "any well-formed id within the limit round-trips through the SQLite journal and verifies",
      { sagaId: wellFormedId },
      ({ sagaId }) =>
        Effect.gen(function* () {
          const { tool } = counted()
          expect((yield* Saga.run(sagaId, tool("A-1")))._tag).toBe("Completed")
          const journal = yield* Journal.Journal
          expect((yield* journal.list()).map((record) => record.sagaId)).toEqual([sagaId])
          expect((yield* journal.read(sagaId)).map((entry) => entry.sagaId)).toEqual([sagaId, sagaId, sagaId, sagaId])
          expect(yield* Journal.verify(sagaId)).toMatchObject({ _tag: "Intact", entries: 4 })
        }).pipe(Effect.provide(sqliteStore(`prop-${files.runs++}`).layer)),
      { timeout: 60_000, fastCheck: { numRuns: 40 } }
    )
  })
})

/** The journal text of a store, and the layer that runs sagas on it. */
type Store = () => {
  readonly filename: string | undefined
  readonly layer: Layer.Layer<Saga.Saga | Journal.Journal, unknown>
}

let sqliteFiles = 0

/** Sagas on a fresh SQLite file. */
const sqliteStore = (name = `saga-${sqliteFiles++}`) => {
  const filename = path.join(dir, `${name}.db`)
  return {
    filename,
    layer: Saga.layer.pipe(
      Layer.provideMerge(Layer.merge(SqlJournal.layerSqlite({ filename }), Approval.layerMemory)),
      Layer.orDie
    )
  }
}

function stores(): ReadonlyArray<readonly [string, Store]> {
  return [
    ["memory", () => ({ filename: undefined, layer: Testing.layer })],
    ["SQLite file", () => sqliteStore()]
  ]
}

/** How many sagas and entries an SQLite journal file holds. */
const rowsIn = (filename: string) => {
  const db = new Database(filename, { readonly: true })
  try {
    const count = (table: string) => (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n
    return { sagas: count("effect_saga_sagas"), entries: count("effect_saga_entries") }
  } finally {
    db.close()
  }
}

/** A compensatable tool that records each input it runs with. */
const counted = (name = "reserve") => {
  const runs: Array<string> = []
  const tool = Compensable.make({
    name,
    input: Schema.String,
    success: Schema.String,
    execute: (sku) =>
      Effect.sync(() => {
        runs.push(sku)
        return `r-${sku}`
      }),
    compensate: () => Effect.void
  })
  return { runs, tool }
}

type Tool = ReturnType<typeof counted>["tool"]

/** Saga `sagaId`, halted on an irreversible step awaiting approval, and that step's id. */
const awaitingWire = (sagaId: string) =>
  Effect.gen(function* () {
    const wire = Compensable.make({
      name: "wire",
      input: Schema.Int,
      success: Schema.String,
      reversibility: "irreversible",
      execute: (amount) => Effect.succeed(`wire-${amount}`)
    })
    expect((yield* Saga.run(sagaId, wire(5)))._tag).toBe("AwaitingApproval")
    return { sagaId, stepId: (yield* Saga.status(sagaId)).steps[0]!.stepId }
  })

const Order = SagaDefinition.make("order", {
  input: Schema.String,
  program: (sku: string) => counted().tool(sku)
})

/** Identifiers each rule refuses, for a limit of `maxBytes`. */
const badIdentifiers = (maxBytes: number) =>
  [
    ["a lone surrogate", "sur\uD800", /^it is not well-formed Unicode: a lone surrogate \(U\+D800\) at index 3$/],
    ["a lone low surrogate", "\uDC00sur", /^it is not well-formed Unicode: a lone surrogate \(U\+DC00\) at index 0$/],
    ["empty", "", /^it is empty$/],
    // From JavaScript, or through `as any`: not text at all.
    ["a number", 123 as unknown as string, /^it is not text but a number$/],
    ["null", null as unknown as string, /^it is not text but null$/],
    ["a control character", "a\u0000b", /^it holds a control character \(U\+0000\) at index 1$/],
    [
      "one byte over the limit",
      `${"é".repeat(maxBytes / 2)}x`,
      new RegExp(`^it is ${maxBytes + 1} UTF-8 bytes, over the limit of ${maxBytes}$`)
    ]
  ] as const

/** Every entry point that takes a saga id (or an effect id), with the kind and limit it checks. */
const entryPoints: ReadonlyArray<
  readonly [
    string,
    SagaError.IdentifierKind,
    number,
    (id: string, tool: Tool) => Effect.Effect<unknown, unknown, Saga.Saga | Journal.Journal>
  ]
> = [
  ["Saga.run", "saga id", Saga.MAX_SAGA_ID_BYTES, (id, tool) => Saga.run(id, tool("A-1"))],
  ["Saga.start", "saga id", Saga.MAX_SAGA_ID_BYTES, (id) => Saga.start(Order, id, "A-1")],
  ["Saga.resume", "saga id", Saga.MAX_SAGA_ID_BYTES, (id, tool) => Saga.resume(id, tool("A-1"))],
  ["Saga.compensate", "saga id", Saga.MAX_JOURNAL_ID_BYTES, (id) => Saga.compensate(id)],
  ["Saga.approve", "saga id", Saga.MAX_JOURNAL_ID_BYTES, (id) => Saga.approve(id, "step", { by: "alice" })],
  ["Saga.reject", "saga id", Saga.MAX_JOURNAL_ID_BYTES, (id) => Saga.reject(id, "step", { by: "bob", reason: "no" })],
  ["Saga.renewApproval", "saga id", Saga.MAX_JOURNAL_ID_BYTES, (id) => Saga.renewApproval(id, "step", { by: "alice" })],
  [
    "Saga.resolve",
    "saga id",
    Saga.MAX_JOURNAL_ID_BYTES,
    (id) => Saga.resolve(id, "step", { outcome: "not-applied", by: "alice" })
  ],
  ["Saga.status", "saga id", Saga.MAX_JOURNAL_ID_BYTES, (id) => Saga.status(id)],
  ["Journal.verify", "saga id", Saga.MAX_JOURNAL_ID_BYTES, (id) => Journal.verify(id)],
  ["Journal.inspect", "saga id", Saga.MAX_JOURNAL_ID_BYTES, (id) => Journal.inspect(id)],
  ["Journal.exportNdjson", "saga id", Saga.MAX_JOURNAL_ID_BYTES, (id) => Journal.exportNdjson(id)],
  ["Saga.compensateEffect", "effect id", Saga.MAX_JOURNAL_ID_BYTES, (id) => Saga.compensateEffect(id)],
  ["Saga.approve's step", "step id", Saga.MAX_JOURNAL_ID_BYTES, (id) => Saga.approve("s", id, { by: "alice" })],
  [
    "Saga.reject's step",
    "step id",
    Saga.MAX_JOURNAL_ID_BYTES,
    (id) => Saga.reject("s", id, { by: "bob", reason: "no" })
  ],
  [
    "Saga.renewApproval's step",
    "step id",
    Saga.MAX_JOURNAL_ID_BYTES,
    (id) => Saga.renewApproval("s", id, { by: "al" })
  ],
  [
    "Saga.resolve's step",
    "step id",
    Saga.MAX_JOURNAL_ID_BYTES,
    (id) => Saga.resolve("s", id, { outcome: "not-applied", by: "alice" })
  ],
  ["Saga.approve's by", "principal", Saga.MAX_PRINCIPAL_BYTES, (by) => Saga.approve("s", "step", { by })],
  ["Saga.reject's by", "principal", Saga.MAX_PRINCIPAL_BYTES, (by) => Saga.reject("s", "step", { by, reason: "no" })],
  ["Saga.renewApproval's by", "principal", Saga.MAX_PRINCIPAL_BYTES, (by) => Saga.renewApproval("s", "step", { by })],
  [
    "Saga.resolve's by",
    "principal",
    Saga.MAX_PRINCIPAL_BYTES,
    (by) => Saga.resolve("s", "step", { outcome: "applied", by, result: "r" })
  ]
]

/**
 * Non-empty, well-formed ids with no control character, within MAX_SAGA_ID_BYTES: ASCII to astral
 * planes; not "." or "..", which a URL takes as a step of its path (refused: a test of its own).
 */
const wellFormedId = fc
  .oneof(
    fc.string({ unit: "binary", minLength: 1, maxLength: 200 }),
    fc.string({ unit: "grapheme", minLength: 1, maxLength: 60 }),
    fc.string({ unit: "binary-ascii", minLength: 1, maxLength: Saga.MAX_SAGA_ID_BYTES })
  )
  .filter(
    (id) => !/[\p{Cs}\p{Cc}]/u.test(id) && Buffer.byteLength(id) <= Saga.MAX_SAGA_ID_BYTES && id !== "." && id !== ".."
  )

/** The Saga layer with a toolkit validated beside it. */
const withToolkit = (toolkit: Toolkit.Toolkit<Record<string, Compensable.Any>>) =>
  Toolkit.layer(toolkit).pipe(Layer.provideMerge(Testing.layer))
