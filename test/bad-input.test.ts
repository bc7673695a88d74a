import { assert, describe, expect, it } from "@effect/vitest"
import { Chunk, Duration, Effect, Layer, List, Logger, Option, Schema } from "effect"
import { Approval, Compensable, Journal, Saga, SagaError, Toolkit } from "../src/index.js"
import * as Testing from "../src/Testing.js"
import { entriesOf } from "./fixtures/journal-reads.js"

describe("bad input and bad declarations", () => {
  it.effect(
    "a typed error its failure describes that cannot be journaled (too deep) reaches the program as its replay does: Outcome.Failed",
    () =>
      Effect.gen(function* () {
        class Declined extends Schema.TaggedError<Declined>()("Declined", { detail: Schema.Unknown }) {}
        let deep: unknown = 1
        for (let level = 0; level < 1000; level++) deep = [deep]
        const pay = Compensable.make({
          name: "pay",
          input: Schema.String,
          success: Schema.String,
          failure: Declined,
          execute: (card) =>
            Effect.fail(card === "deep" ? new Declined({ detail: deep }) : new Declined({ detail: 1 })),
          compensate: () => Effect.void
        })
        const seen: Array<string> = []
        const program = (card: string) =>
          pay(card).pipe(Effect.catchAll((error) => Effect.sync(() => seen.push(error._tag))))
        for (let run = 0; run < 2; run++) yield* Saga.run("deep-error", program("deep"))
        for (let run = 0; run < 2; run++) yield* Saga.run("shallow-error", program("shallow"))
        expect(seen).toEqual(["OutcomeFailed", "OutcomeFailed", "Declined", "Declined"])
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect(
    "an input nested more than 1000 levels deep is refused, whatever the stack could take; 1000 are journaled",
    () =>
      Effect.gen(function* () {
        const nested = (depth: number): unknown => {
          let value: unknown = 1
          for (let level = 0; level < depth; level++) value = [value]
          return value
        }
        const runs: Array<unknown> = []
        const note = Compensable.make({
          name: "note",
          input: Schema.Unknown,
          success: Schema.Unknown,
          execute: (input) => Effect.sync(() => runs.push(input)).pipe(Effect.as(input)),
          compensate: () => Effect.void
        })
        expect((yield* Saga.run("deep-ok", note(nested(1000))))._tag).toBe("Completed")
        const result = yield* Saga.run("deep-refused", Effect.flip(note(nested(1001))))
        assert(result._tag === "Completed")
        expect(result.value).toMatchObject({
          _tag: "InvalidInput",
          reason: "it is nested more than 1000 levels deep"
        })
        expect(runs).toHaveLength(1)
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("an input that fails its schema fails with InvalidInput and journals nothing for that step", () =>
    Effect.gen(function* () {
      const { count, runs } = counted("reserve", Schema.Struct({ quantity: Schema.Int }))
      const result = yield* Saga.run("not-int", Effect.flip(count({ quantity: 1.5 })))
      assert(result._tag === "Completed")
      expect(result.value).toMatchObject({ _tag: "InvalidInput", toolName: "reserve" })
      expect(runs).toEqual([])
      expect(stepEntries(yield* entriesOf("not-int"))).toEqual([])
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("an input over maxPayloadBytes fails with PayloadTooLarge and journals nothing for that step", () =>
    Effect.gen(function* () {
      const { count, runs } = counted("note", Schema.String, { maxPayloadBytes: 16 })
      const result = yield* Saga.run("too-large", Effect.flip(count("x".repeat(100))))
      assert(result._tag === "Completed")
      expect(result.value).toMatchObject({ _tag: "PayloadTooLarge", toolName: "note", bytes: 102, maxBytes: 16 })
      expect(runs).toEqual([])
      expect(stepEntries(yield* entriesOf("too-large"))).toEqual([])
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("calling a name the toolkit does not have fails with UnknownTool", () =>
    Effect.gen(function* () {
      const { count } = counted("reserve", Schema.String)
      const toolkit = Toolkit.make({ count })
      const result = yield* Saga.run("unknown-tool", Effect.flip(Toolkit.call(toolkit, "reserv", "A-1")))
      assert(result._tag === "Completed")
      expect(result.value).toBeInstanceOf(Toolkit.UnknownTool)
      expect(result.value).toMatchObject({ toolName: "reserv", known: ["reserve"] })
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("Toolkit.call with an encoded input that does not decode fails with InvalidInput", () =>
    Effect.gen(function* () {
      const { count, runs } = counted("reserve", Schema.Struct({ quantity: Schema.Int }))
      const toolkit = Toolkit.make({ count })
      const result = yield* Saga.run("bad-call", Effect.flip(Toolkit.call(toolkit, "reserve", { quantity: "two" })))
      assert(result._tag === "Completed")
      expect(result.value).toMatchObject({ _tag: "InvalidInput", toolName: "reserve" })
      expect(runs).toEqual([])
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect(
    "Toolkit.call with arguments JSON cannot hold (a cycle, a BigInt, a function) fails with InvalidInput, nothing journaled",
    () =>
      Effect.gen(function* () {
        const { count, runs } = counted("reserve", Schema.Unknown)
        const toolkit = Toolkit.make({ count })
        const cyclic: Record<string, unknown> = { sku: "A-1" }
        cyclic.self = cyclic
        for (const [args, reason] of [
          [cyclic, /^cannot serialize as JSON: TypeError: Converting circular structure to JSON/],
          [{ quantity: 2n }, /^cannot serialize as JSON: TypeError: Do not know how to serialize a BigInt/],
          [() => 1, /^cannot serialize as JSON: a function$/]
        ] as const) {
          const result = yield* Saga.run("unserializable-call", Effect.flip(Toolkit.call(toolkit, "reserve", args)))
          assert(result._tag === "Completed")
          expect(result.value).toBeInstanceOf(Compensable.InvalidInput)
          expect(result.value).toMatchObject({ toolName: "reserve", reason: expect.stringMatching(reason) })
        }
        expect(runs).toEqual([])
        expect(stepEntries(yield* entriesOf("unserializable-call"))).toEqual([])
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect(
    "an input or a result JSON would not hold as it is (a Map, a Set, a typed array, a Date, a function) is refused, nothing run or journaled",
    () =>
      Effect.gen(function* () {
        const { count, runs } = counted("tag", Schema.Struct({ tags: Schema.Unknown }))
        const toolkit = Toolkit.make({ count })
        for (const [tags, reason] of [
          [new Map([["env", "prod"]]), "a Map cannot be journaled: JSON would read it back as a plain object"],
          [new Set(["prod"]), "a Set cannot be journaled: JSON would read it back as a plain object"],
          [new Uint8Array([1, 2]), "a Uint8Array cannot be journaled: JSON would read it back as a plain object"],
          [[/prod/], "a RegExp cannot be journaled: JSON would read it back as a plain object"],
          [new Date(Number.NaN), "an invalid Date cannot be journaled: JSON would read it back as null"],
          [
            { at: new Date(0) },
            "a Date cannot be journaled as it is: JSON would read it back as text (declare it with Schema.Date"
          ],
          [{ pick: () => "prod" }, "a function cannot be journaled: JSON has no text for it"],
          [[Symbol("prod")], "a symbol cannot be journaled: JSON has no text for it"]
        ] as const) {
          const called = yield* Saga.run(`lossy-call-${reason}`, Effect.flip(Toolkit.call(toolkit, "tag", { tags })))
          expect(called).toMatchObject({
            _tag: "Completed",
            value: { _tag: "InvalidInput", toolName: "tag", reason: expect.stringContaining(reason) }
          })
          const direct = yield* Saga.run(`lossy-direct-${reason}`, Effect.flip(count({ tags })))
          expect(direct).toMatchObject({
            _tag: "Completed",
            value: { _tag: "InvalidInput", reason: expect.stringContaining(reason) }
          })
          expect(stepEntries(yield* entriesOf(`lossy-call-${reason}`))).toEqual([])
          expect(stepEntries(yield* entriesOf(`lossy-direct-${reason}`))).toEqual([])
        }
        expect(runs).toEqual([])
        // A plain object and an object without a prototype are journaled as JSON writes them.
        const fine = yield* Saga.run(
          "fine",
          count({ tags: { at: "1970-01-01T00:00:00.000Z", bare: Object.create(null) } })
        )
        expect(fine._tag).toBe("Completed")
        // A result the tool answers with is checked alike: the step's outcome is unknown, not journaled as {}.
        const lookup = Compensable.make({
          name: "lookup",
          input: Schema.String,
          success: Schema.Unknown,
          execute: () => Effect.succeed(new Map([["env", "prod"]])),
          compensate: () => Effect.void
        })
        const looked = yield* Saga.run("lossy-result", lookup("env"))
        assert(looked._tag === "NeedsAttention")
        expect(looked.unknown[0]!.reason).toContain("a Map cannot be journaled")
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect(
    "a key named __proto__ in an input is refused with InvalidInput, by Toolkit.call and by a call, before anything runs or is journaled",
    () =>
      Effect.gen(function* () {
        const sent: Array<unknown> = []
        const send = Compensable.make({
          name: "send",
          input: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
          success: Schema.String,
          reversibility: "irreversible",
          execute: (message) =>
            Effect.sync(() => {
              sent.push((message as { isAdmin?: unknown }).isAdmin)
              return "sent"
            })
        })
        const note = Compensable.make({
          name: "note",
          input: Schema.Struct({
            to: Schema.String,
            extra: Schema.Record({ key: Schema.String, value: Schema.Unknown })
          }),
          success: Schema.String,
          execute: () => Effect.succeed("noted"),
          compensate: () => Effect.void
        })
        // As a model's tool call arrives: JSON, where `__proto__` is a key like any other.
        const args = JSON.parse('{"__proto__": {"isAdmin": true}, "to": "bob"}')
        const nested = JSON.parse('{"to": "bob", "extra": {"__proto__": {"isAdmin": 1}}}')
        const reason = `it holds a key named "__proto__", which decoding may make the object's prototype (Schema.Record does): the tool could read properties the journal does not hold`
        // As a server decodes it before the call (an MCP server, a request handler): the record's
        // decoding made `{ isAdmin: 1 }` the prototype of `extra`, which encoding drops.
        const decoded = Schema.decodeUnknownSync(note.spec.input)(nested)
        expect((decoded.extra as { isAdmin?: unknown }).isAdmin).toBe(1)
        const calls = [
          Toolkit.call(Toolkit.make({ send }), "send", args),
          send(args),
          Toolkit.call(Toolkit.make({ note }), "note", nested),
          note(nested),
          note(decoded)
        ]
        for (const [index, call] of calls.entries()) {
          const result = yield* Saga.run(`proto-${index}`, call)
          expect(result).toMatchObject({ _tag: "Compensated", cause: { error: { _tag: "InvalidInput", reason } } })
          expect((yield* entriesOf(`proto-${index}`)).map((entry) => entry.phase)).not.toContain("INTENT")
        }
        expect(sent).toEqual([])
        // What a schema makes of a class or an option is no such key.
        class Card extends Schema.Class<Card>("Card")({ last4: Schema.String }) {
          get masked() {
            return `**** ${this.last4}`
          }
        }
        const charge = Compensable.make({
          name: "charge",
          input: Schema.Struct({ card: Card, tip: Schema.Option(Schema.Number) }),
          success: Schema.String,
          execute: ({ card }) => Effect.succeed(card.masked),
          compensate: () => Effect.void
        })
        const charged = yield* Saga.run(
          "proto-free",
          charge({ card: new Card({ last4: "4242" }), tip: Option.some(2) })
        )
        expect(charged).toMatchObject({ _tag: "Completed", value: "**** 4242" })
        // Nor a struct's fields inherited from defaults: they are encoded, and journaled.
        const pay = Compensable.make({
          name: "pay",
          input: Schema.Struct({ amount: Schema.Int, currency: Schema.String }),
          success: Schema.String,
          execute: ({ amount, currency }) => Effect.succeed(`${amount} ${currency}`),
          compensate: () => Effect.void
        })
        const withDefaults = Object.assign(Object.create({ currency: "EUR" }), { amount: 5 })
        expect(yield* Saga.run("proto-defaults", pay(withDefaults))).toMatchObject({
          _tag: "Completed",
          value: "5 EUR"
        })
        const intent = (yield* entriesOf("proto-defaults")).find((entry) => entry.phase === "INTENT")
        expect(JSON.parse(intent?.input ?? "null")).toEqual({ amount: 5, currency: "EUR" })
        // Nor Effect's own values, whose prototypes have methods: a result of them is refused for its
        // toJSON (a replay would be given what it wrote), not taken for a smuggled prototype.
        const measure = Compensable.make({
          name: "measure",
          input: Schema.String,
          success: Schema.Unknown,
          execute: () => Effect.succeed({ took: Duration.seconds(2), tags: List.make("a") }),
          compensate: () => Effect.void
        })
        const measured = yield* Saga.run("proto-effect-values", measure("job"))
        assert(measured._tag === "NeedsAttention")
        expect(measured.unknown[0]!.reason).toContain("a Duration with a toJSON cannot be journaled as it is")
        expect(measured.unknown[0]!.reason).not.toContain("__proto__")
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect(
    "a result with a toJSON (a Date, Effect's Chunk) is refused: a replay would be given what its toJSON wrote, not it",
    () =>
      Effect.gen(function* () {
        const results: Record<string, readonly [unknown, string]> = {
          date: [{ createdAt: new Date(0) }, "a Date cannot be journaled as it is: JSON would read it back as text"],
          chunk: [Chunk.make(1, 2), "a Chunk with a toJSON cannot be journaled as it is"],
          "nested-chunk": [{ batch: Chunk.make({ sku: "A-1" }) }, "a Chunk with a toJSON cannot be journaled as it is"],
          own: [{ count: { toJSON: () => 3 } }, "an object with a toJSON cannot be journaled as it is"],
          option: [{ picked: Option.some(1) }, "an Option with a toJSON cannot be journaled as it is"]
        }
        const gather = Compensable.make({
          name: "gather",
          input: Schema.String,
          success: Schema.Unknown,
          execute: (name) => Effect.succeed(results[name]![0]),
          compensate: () => Effect.void
        })
        for (const [name, [, reason]] of Object.entries(results)) {
          // The call ran: its outcome is unknown, never journaled as what a replay would misread.
          const gathered = yield* Saga.run(`to-json-${name}`, gather(name))
          assert(gathered._tag === "NeedsAttention")
          expect(gathered.unknown[0]!.reason).toContain(reason)
          const phases = (yield* entriesOf(`to-json-${name}`)).map((entry) => entry.phase)
          expect(phases).not.toContain("EXECUTED")
        }
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect(
    "an irreversible step is given its input as journaled and approved: a property its schema does not declare never reaches it",
    () =>
      Effect.gen(function* () {
        class Payee extends Schema.Class<Payee>("Payee")({ iban: Schema.String }) {
          get country() {
            return this.iban.slice(0, 2)
          }
        }
        const sent: Array<string> = []
        const wire = Compensable.make({
          name: "wire",
          input: Schema.Struct({ payee: Payee, amount: Schema.Int }),
          success: Schema.String,
          reversibility: "irreversible",
          execute: (order) =>
            Effect.sync(() => {
              sent.push(`${JSON.stringify(order)} ${order.payee.country}`)
              return "sent"
            })
        })
        // As a request body passed on with a cast: a field the schema does not declare rides along.
        const body = { payee: new Payee({ iban: "DE89 3704" }), amount: 42, fee: 9_000 }
        const waiting = yield* Saga.run("extra-field", wire(body))
        assert(waiting._tag === "AwaitingApproval")
        expect(waiting.request.input).toBe('{"payee":{"iban":"DE89 3704"},"amount":42}')
        yield* Saga.approve("extra-field", waiting.request.stepId, { by: "alice" })
        expect((yield* Saga.run("extra-field", wire(body)))._tag).toBe("Completed")
        expect(sent).toEqual(['{"payee":{"iban":"DE89 3704"},"amount":42} DE'])
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("Toolkit.layer fails with DeclarationError when two tools share a name, before anything runs", () =>
    Effect.gen(function* () {
      const first = counted("reserve", Schema.String)
      const second = counted("reserve", Schema.String)
      const toolkit = Toolkit.make({ first: first.count, second: second.count })
      const error = yield* Effect.flip(Saga.run("dup", first.count("A-1")).pipe(Effect.provide(withToolkit(toolkit))))
      expect(error).toMatchObject({ _tag: "DeclarationError", toolName: "reserve" })
      expect(first.runs).toEqual([])
    })
  )

  /** An irreversible wire transfer, declared as each test below changes it. */
  const sendWire = {
    name: "sendWire",
    input: Schema.Number,
    success: Schema.String,
    reversibility: "irreversible",
    execute: () => Effect.succeed("w-1")
  } as const

  it.effect("Toolkit.layer fails with DeclarationError for an irreversible tool that declares an undo", () =>
    Effect.gen(function* () {
      const wire = Compensable.make({ ...sendWire, compensate: () => Effect.void } as any)
      const error = yield* Effect.flip(Layer.build(withToolkit(Toolkit.make({ wire }))).pipe(Effect.scoped))
      expect(error).toMatchObject({ _tag: "DeclarationError", toolName: "sendWire" })
      expect(error.message).toContain("irreversible")
    })
  )

  it.effect("Toolkit.layer fails with DeclarationError for undoCapabilities on a tool with no undo", () =>
    Effect.gen(function* () {
      const wire = Compensable.make({ ...sendWire, undoCapabilities: ["network"] })
      const error = yield* Effect.flip(Layer.build(withToolkit(Toolkit.make({ wire }))).pipe(Effect.scoped))
      expect(error).toMatchObject({ _tag: "DeclarationError", toolName: "sendWire" })
      expect(error.message).toContain(
        "it declares undoCapabilities but no undo: nothing would run with them (declare compensate, or drop undoCapabilities)"
      )
    })
  )

  it.effect("Toolkit.layer fails with DeclarationError for a capability that is not one word", () =>
    Effect.gen(function* () {
      for (const [options, word] of [
        [{ capabilities: ["network; no outcome journaled"] }, "network; no outcome journaled"],
        [{ capabilities: ["network", ""] }, ""],
        [{ capabilities: ["env:A\nB"] }, "env:A\nB"],
        [{ undoCapabilities: ["x".repeat(201)], compensate: () => Effect.void }, "x".repeat(201)]
      ] as const) {
        const tool = Compensable.make({ ...sendWire, reversibility: "compensatable", ...options })
        const error = yield* Effect.flip(Layer.build(withToolkit(Toolkit.make({ tool }))).pipe(Effect.scoped))
        expect(error).toMatchObject({ _tag: "DeclarationError", toolName: "sendWire" })
        expect(error.message).toContain(
          `capability ${JSON.stringify(word)} is not one word of at most 200 letters, digits and _ . : / @ = + - (as network, env:API_HOST)`
        )
      }
      const fine = Compensable.make({
        ...sendWire,
        capabilities: ["network", "env:API_HOST", "fs:/tmp/out", "db=orders"]
      })
      yield* Layer.build(withToolkit(Toolkit.make({ fine }))).pipe(Effect.scoped)
    })
  )

  it.effect.each([
    ["Schema.instanceOf", Schema.instanceOf(Money)],
    ["Schema.BigIntFromSelf", Schema.BigIntFromSelf]
  ] as const)("Toolkit.layer fails with DeclarationError for an input schema that cannot encode: %s", ([, input]) =>
    Effect.gen(function* () {
      const { count, runs } = counted("charge", input as Schema.Schema<unknown>)
      const error = yield* Effect.flip(Layer.build(withToolkit(Toolkit.make({ count }))).pipe(Effect.scoped))
      expect(error).toMatchObject({ _tag: "DeclarationError", toolName: "charge" })
      expect(error.message).toContain("input schema")
      expect(runs).toEqual([])
    })
  )

  it.effect("a tool with an undo whose result carries nothing logs a warning when its toolkit is built", () =>
    Effect.gen(function* () {
      const logs: Array<string> = []
      const capture = Logger.add(
        Logger.make(({ logLevel, message }) => logs.push(`${logLevel.label} ${String(message)}`))
      )
      const voidUndo = Compensable.make({
        name: "ping",
        input: Schema.String,
        success: Schema.Void,
        execute: () => Effect.void,
        compensate: () => Effect.void
      })
      const { count } = counted("reserve", Schema.String)
      yield* Layer.build(withToolkit(Toolkit.make({ voidUndo, count }))).pipe(Effect.scoped, Effect.provide(capture))
      expect(logs).toHaveLength(1)
      expect(logs[0]).toMatch(/^WARN tool ping has an undo but its result carries nothing/)
    })
  )

  it.effect("a program that changed between runs fails with NonDeterminism and leaves the journal untouched", () =>
    Effect.gen(function* () {
      const { count, runs } = counted("reserve", Schema.String)
      const wire = Compensable.make({
        name: "sendWire",
        input: Schema.Number,
        success: Schema.String,
        reversibility: "irreversible",
        execute: () => Effect.succeed("w-1")
      })
      const first = yield* Saga.run("changed", Effect.zipRight(count("A-1"), wire(10)))
      expect(first._tag).toBe("AwaitingApproval")
      const before = yield* recordOf("changed")
      const error = yield* Effect.flip(Saga.run("changed", Effect.zipRight(count("B-2"), wire(10))))
      expect(error).toBeInstanceOf(SagaError.NonDeterminism)
      expect(error).toMatchObject({ sagaId: "changed" })
      expect(runs).toEqual(["A-1"])
      expect(yield* recordOf("changed")).toEqual(before)
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("a completed saga run again with a changed program fails with NonDeterminism and undoes nothing", () =>
    Effect.gen(function* () {
      const { count, runs } = counted("reserve", Schema.String)
      expect((yield* Saga.run("done-changed", count("A-1")))._tag).toBe("Completed")
      const before = yield* recordOf("done-changed")
      const error = yield* Effect.flip(Saga.run("done-changed", count("B-2")))
      expect(error).toBeInstanceOf(SagaError.NonDeterminism)
      expect(runs).toEqual(["A-1"])
      expect(yield* recordOf("done-changed")).toEqual(before)
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect(
    "an input JSON cannot hold as it is (NaN, an infinity) fails with InvalidInput; the tool does not run",
    () =>
      Effect.gen(function* () {
        const { count, runs } = counted("measure", Schema.Number)
        for (const [sagaId, value] of [
          ["nan-input", Number.NaN],
          ["infinite-input", Number.POSITIVE_INFINITY]
        ] as const) {
          const result = yield* Saga.run(sagaId, Effect.flip(count(value)))
          assert(result._tag === "Completed")
          expect(result.value).toMatchObject({
            _tag: "InvalidInput",
            reason: `${value} cannot be journaled: JSON would read it back as null`
          })
          expect(stepEntries(yield* entriesOf(sagaId))).toEqual([])
        }
        expect(runs).toEqual([])
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect(
    "a result JSON cannot hold as it is leaves the step unknown (NeedsAttention), never a null that replays wrong",
    () =>
      Effect.gen(function* () {
        for (const [sagaId, success, value, what] of [
          ["nan-result", Schema.Number, Number.NaN, "NaN"],
          ["undefined-result", Schema.Undefined, undefined, "undefined"],
          ["hole-result", Schema.Array(Schema.UndefinedOr(Schema.Number)), [1, undefined], "undefined in an array"]
        ] as const) {
          const tool = Compensable.make({
            name: "measure",
            input: Schema.String,
            success: success as Schema.Schema<unknown>,
            execute: () => Effect.succeed(value),
            compensate: () => Effect.void
          })
          const result = yield* Saga.run(sagaId, tool("a"))
          assert(result._tag === "NeedsAttention")
          expect(result.unknown[0]!.reason).toContain(`${what} cannot be journaled: JSON would read it back as null`)
          expect(stepEntries(yield* entriesOf(sagaId)).map((entry) => entry.phase)).toEqual(["INTENT"])
        }
        // A void result is journaled as null, which reads back as void.
        const done = Compensable.make({
          name: "notify",
          input: Schema.String,
          success: Schema.Void,
          execute: () => Effect.void,
          compensate: () => Effect.void
        })
        expect((yield* Saga.run("void-result", done("a")))._tag).toBe("Completed")
        expect((yield* Saga.run("void-result", done("a")))._tag).toBe("Completed")
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect.each([
    [{ leaseTtl: 0 }, "leaseTtl", "0 is not a positive, finite duration"],
    [{ leaseTtl: "-1 seconds" }, "leaseTtl", '"-1 seconds" is not a positive, finite duration'],
    [{ leaseTtl: -5 }, "leaseTtl", "-5 is not a positive, finite duration"],
    [{ leaseTtl: Number.NaN }, "leaseTtl", "NaN is not a positive, finite duration"],
    [{ leaseTtl: "1 nanos" }, "leaseTtl", '"1 nanos" is under 1 millisecond'],
    [{ leaseTtl: "999 micros" }, "leaseTtl", '"999 micros" is under 1 millisecond'],
    [{ approvalTtl: "-2 minutes" }, "approvalTtl", '"-2 minutes" is not a positive duration'],
    [{ leaseTtl: Number.POSITIVE_INFINITY }, "leaseTtl", "Infinity is not a positive, finite duration"],
    [{ leaseTtl: "100000000 weeks" }, "leaseTtl", '"100000000 weeks" is longer than 365 days'],
    [{ leaseTtl: "366 days" }, "leaseTtl", '"366 days" is longer than 365 days'],
    [{ leaseTtl: "banana" as Duration.DurationInput }, "leaseTtl", '"banana" is not a duration'],
    [{ approvalTtl: 0 }, "approvalTtl", "is not a positive duration: every approval would have expired"],
    [{ approvalTtl: "soon" as Duration.DurationInput }, "approvalTtl", '"soon" is not a duration'],
    [{ owner: "worker\n1" }, "owner", "control character"],
    [{ owner: "" }, "owner", "it is empty"],
    [{ leaseTTL: "5 seconds" } as Saga.WorkerOptions, "options", 'name "leaseTTL", which is no option'],
    ["fast" as Saga.WorkerOptions, "options", "are a string, not an object"]
  ] as const)(
    "Saga.layerWith(%o) fails to build with InvalidWorkerOptions (%s), before anything is read",
    ([options, option, reason]) =>
      Effect.gen(function* () {
        const error = yield* Effect.flip(Layer.build(Saga.layerWith(options)).pipe(Effect.scoped))
        expect(error).toBeInstanceOf(SagaError.InvalidWorkerOptions)
        expect(error).toMatchObject({ option, reason: expect.stringContaining(reason) })
      }).pipe(Effect.provide(Layer.merge(Journal.layerMemory, Approval.layerMemory)))
  )

  it.effect("Saga.layerWith(null) from JavaScript builds with the defaults", () =>
    Effect.gen(function* () {
      const saga = yield* Layer.build(Saga.layerWith(null as unknown as Saga.WorkerOptions)).pipe(Effect.scoped)
      expect(saga).toBeDefined()
    }).pipe(Effect.provide(Layer.merge(Journal.layerMemory, Approval.layerMemory)))
  )
})

class Money {
  constructor(readonly cents: number) {}
}

/** A tool that records each input it runs with. */
const counted = <I, IE>(name: string, input: Schema.Schema<I, IE>, options?: Compensable.ToolOptions) => {
  const runs: Array<I> = []
  const count = Compensable.make({
    ...options,
    name,
    input,
    success: Schema.String,
    execute: (value: I) =>
      Effect.sync(() => {
        runs.push(value)
        return `${name}-${runs.length}`
      }),
    compensate: () => Effect.void
  })
  return { count, runs }
}

const withToolkit = <Tools extends Record<string, Compensable.Any>>(toolkit: Toolkit.Toolkit<Tools>) =>
  Toolkit.layer(toolkit).pipe(Layer.provideMerge(Testing.layer))

const recordOf = (sagaId: string) =>
  Effect.flatMap(Journal.Journal, (journal) => journal.get(sagaId)).pipe(Effect.map(Option.getOrThrow))

const stepEntries = (entries: ReadonlyArray<Journal.Entry>) => entries.filter((entry) => entry.stepId !== null)
