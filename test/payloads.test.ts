import * as Fs from "node:fs"
import * as Path from "node:path"
import { assert, describe, expect, it } from "@effect/vitest"
import { Effect, Either, Option, Schema } from "effect"
import * as fc from "effect/FastCheck"
import { Compensable, Journal, Saga, Timeline } from "../src/index.js"
import { withoutReceipt } from "../src/internal/cli/redact.js"
import { executedDraft, intentDraft, ownPayloadOf } from "../src/internal/journal/drafts.js"
import { decodeEntry, decodeOwnEntry, decodePayload, encodePayload, schemas } from "../src/internal/journal/payloads.js"
import * as Testing from "../src/Testing.js"
import { entriesOf } from "./fixtures/journal-reads.js"

describe("journal payloads", () => {
  it("every payload the main of before the schemas journaled decodes, and encodes back to its exact text", () => {
    expect(mainPayloads.length).toBeGreaterThan(60)
    for (const { payload, phase } of mainPayloads) {
      const decoded = decodePayload(phase, payload)
      assert(Either.isRight(decoded), `${phase} ${payload}`)
      expect(encodePayload(phase, decoded.right)).toBe(payload)
    }
  })

  it("a payload out of shape is told where and what was expected, in words, never the value found", () => {
    const why = (phase: Journal.Phase, text: string) =>
      Either.getLeft(decodePayload(phase, text)).pipe(Option.getOrThrow)
    expect(why("EXECUTED", "[1,2]")).toBe("the payload: is not an object")
    expect(why("EXECUTED", "42")).toBe("the payload: is not an object")
    expect(why("EXECUTED", '{"result":1,"receipt":12345}')).toBe("receipt: is neither text nor a sealed receipt")
    expect(why("EXECUTED", '{"result":1,"receipt":["a"]}')).toBe("receipt: is neither text nor a sealed receipt")
    expect(why("EXECUTED", '{"result":1,"receipt":{"sealed":"aes-256-gcm"}}')).toBe("receipt.kid: is missing")
    expect(why("INTENT", '{"idempotencyKey":"k","attempt":"2"}')).toBe("attempt: Expected number")
    expect(why("EXECUTED", "{")).toBe("it is not JSON")
  })

  for (const phase of Journal.Phase.literals) {
    it.prop(
      `${phase}: a generated payload decodes to itself, and its text survives a decode`,
      { payload: schemas[phase] },
      ({ payload }) => {
        const text = encodePayload(phase, payload)
        const decoded = decodePayload(phase, text)
        assert(Either.isRight(decoded))
        // JSON has no -0: a generated -0 comes back as 0, the one difference JSON itself makes.
        expect(decoded.right).toEqual(JSON.parse(JSON.stringify(payload)))
        expect(encodePayload(phase, decoded.right)).toBe(text)
      },
      { timeout: 30_000, fastCheck: { numRuns: 200 } }
    )
  }

  const step = { stepId: "reserve:abc#1", toolName: "reserve" }
  const Capabilities = Schema.Array(Schema.String)

  it.prop(
    "a step's own INTENT is the text the schema writes, and keeps the payload its text decodes to",
    {
      key: Schema.String,
      attempt: Schema.Int,
      deferred: Schema.Boolean,
      capabilities: Schema.UndefinedOr(Capabilities),
      changesNothing: Schema.Boolean,
      undo: Schema.Boolean,
      receiptRequired: Schema.Boolean,
      continues: Schema.Boolean,
      retriesByKey: Schema.Boolean
    },
    ({ attempt, capabilities, changesNothing, continues, deferred, key, receiptRequired, retriesByKey, undo }) => {
      const fields = {
        idempotencyKey: key,
        attempt,
        deferred,
        capabilities,
        changesNothing,
        undo,
        receiptRequired,
        continues,
        retriesByKey
      }
      const draft = intentDraft(step, fields, "{}")
      const payload = {
        idempotencyKey: key,
        attempt,
        deferred: deferred ? true : undefined,
        capabilities,
        changesNothing: changesNothing ? true : undefined,
        undo: undo ? true : undefined,
        receiptRequired: receiptRequired ? true : undefined,
        onFailure: continues ? ("continue" as const) : undefined,
        retriesByKey: retriesByKey ? true : undefined
      }
      expect(draft.payload).toBe(encodePayload("INTENT", payload))
      expect(ownPayloadOf(draft)).toStrictEqual(Either.getOrThrow(decodePayload("INTENT", draft.payload)))
    },
    { fastCheck: { numRuns: 300 } }
  )

  it.prop(
    "a step's own EXECUTED, composed around the result's text, is the text the schema writes and keeps its decoded payload",
    {
      result: fc.jsonValue(),
      receipt: fc.option(
        fc.oneof(
          fc.string(),
          fc.record(
            {
              sealed: fc.constant("aes-256-gcm" as const),
              kid: fc.string(),
              iv: fc.string(),
              data: fc.string(),
              tag: fc.string()
            },
            { requiredKeys: ["sealed", "kid", "iv", "data"] }
          )
        ),
        { nil: undefined }
      ),
      changesNothing: Schema.Boolean
    },
    ({ changesNothing, receipt, result }) => {
      const resultJson = JSON.stringify(result)
      const draft = executedDraft(step, { resultJson, receipt, changesNothing })
      const payload = { result: JSON.parse(resultJson), receipt, changesNothing: changesNothing ? true : undefined }
      expect(draft.payload).toBe(encodePayload("EXECUTED", payload))
      expect(ownPayloadOf(draft)).toStrictEqual(Either.getOrThrow(decodePayload("EXECUTED", draft.payload)))
    },
    { fastCheck: { numRuns: 300 } }
  )

  it("an entry the writer just encoded reads the same parsed (decodeOwnEntry) as decoded with its schema", () => {
    for (const { payload, phase } of mainPayloads) {
      const entry = { sagaId: "s", seq: 1, stepId: null, toolName: null, phase, input: null, payload, at: "", hash: "" }
      const decoded = decodeEntry(entry)
      assert(Either.isRight(decoded), `${phase} ${payload}`)
      expect(decodeOwnEntry(entry)).toEqual(decoded)
    }
  })

  it.effect(
    "a payload that does not fit its phase is a break (undecodable) at its seq: the engine acts on nothing",
    () =>
      Effect.gen(function* () {
        yield* Saga.run("odd", reserve({ sku: "A-1" }))
        const journal = yield* Journal.Journal
        const position = Option.getOrThrow(yield* journal.get("odd"))
        const [executed] = (yield* entriesOf("odd")).filter((entry) => entry.phase === "EXECUTED")
        // Written through the store, so that the chain verifies: only the payload is out of shape.
        const odd = { stepId: executed!.stepId, toolName: "reserve", phase: "EXECUTED" as const, input: null }
        yield* journal.append("odd", position, [{ ...odd, payload: '{"result":"res-A-1","receipt":7}' }])
        const before = (yield* entriesOf("odd")).length

        // A break like any other: refused by every command, shown by every read, never with its value.
        const broken = { sagaId: "odd", seq: before, problem: "undecodable" }
        expect(yield* Effect.flip(Saga.run("odd", reserve({ sku: "A-1" })))).toMatchObject({
          _tag: "JournalTampered",
          ...broken
        })
        expect(yield* Effect.flip(Saga.compensate("odd"))).toMatchObject({ _tag: "JournalTampered", ...broken })
        const status = yield* Saga.status("odd")
        expect(status.tampered).toEqual({
          seq: before,
          problem: "undecodable",
          // Neither text nor sealed: not told that a receipt must be sealed.
          reason: "its EXECUTED payload does not decode: receipt: is neither text nor a sealed receipt"
        })
        expect(status.tampered?.reason).not.toContain("actual")
        expect(yield* Journal.verify("odd")).toMatchObject({ _tag: "Broken", seq: before, problem: "undecodable" })
        expect(yield* entriesOf("odd")).toHaveLength(before)

        const stored = (yield* entriesOf("odd")).at(-1)!
        expect(Timeline.detailOf(stored)).toBe("payload does not decode")
        expect(withoutReceipt(stored).payload).not.toContain("7")
      }).pipe(Effect.provide(Testing.layer))
  )
})

/** One payload of each shape the full test suite of commit 8c59a11 journaled, as it was stored. */
const mainPayloads: ReadonlyArray<{ readonly phase: Journal.Phase; readonly payload: string | null }> = Fs.readFileSync(
  Path.join(import.meta.dirname, "fixtures", "main-payloads.ndjson"),
  "utf8"
)
  .split("\n")
  .filter((line) => line !== "")
  .map((line) => JSON.parse(line))

const reserve = Compensable.make({
  name: "reserve",
  input: Schema.Struct({ sku: Schema.String }),
  success: Schema.String,
  execute: ({ sku }) => Effect.succeed(`res-${sku}`),
  compensate: () => Effect.void
})
