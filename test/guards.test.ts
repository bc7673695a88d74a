import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import * as Agent from "../src/Agent.js"
import {
  Approval,
  Authority,
  Compensable,
  Journal,
  Keys,
  Metrics,
  Outcome,
  Recovery,
  Saga,
  SagaError,
  Toolkit
} from "../src/index.js"
import * as SagaApi from "../src/SagaApi.js"
import * as Testing from "../src/Testing.js"

describe("error guards", () => {
  for (const family of families) {
    describe(family.name, () => {
      it(`${family.guard.name} accepts every member of the family`, () => {
        for (const error of family.members) expect(family.guard(error), error._tag).toBe(true)
      })

      it(`${family.guard.name} rejects a plain object with a member's _tag and fields`, () => {
        for (const error of family.members) {
          const lookAlike = encode(error)
          expect(lookAlike._tag).toBe(error._tag)
          expect(family.guard(lookAlike), error._tag).toBe(false)
        }
      })

      it(`${family.guard.name} rejects a spread copy of a member ({ ...error }): the type id is on its class`, () => {
        for (const error of family.members) {
          const copy = { ...error }
          expect(copy._tag).toBe(error._tag)
          expect(family.guard(copy), error._tag).toBe(false)
        }
      })

      it(`${family.guard.name} rejects the members of every other family`, () => {
        for (const other of families) {
          if (other === family) continue
          for (const error of other.members) {
            if (related(family, other) && family.members.some((member) => member._tag === error._tag)) continue
            expect(family.guard(error), `${other.name}.${error._tag}`).toBe(false)
          }
        }
      })

      it("its members encode to their tag and fields only: the type id is not encoded", () => {
        for (const error of family.members) {
          const encoded = encode(error)
          expect(Object.getOwnPropertySymbols(encoded), error._tag).toEqual([])
          expect(encoded).toStrictEqual({ _tag: error._tag, ...fieldsOf(error) })
          expect(JSON.stringify(error)).toBe(JSON.stringify(encoded))
        }
      })
    })
  }

  it("Compensable.isStepError accepts InvalidInput, PayloadTooLarge and a refused step key only", () => {
    const refused = (kind: SagaError.IdentifierKind) =>
      new SagaError.InvalidIdentifier({ kind, identifier: '""', reason: "it is empty" })
    expect(Compensable.isStepError(new Compensable.InvalidInput({ toolName: "t", reason: "r" }))).toBe(true)
    expect(Compensable.isStepError(new Compensable.PayloadTooLarge({ toolName: "t", bytes: 2, maxBytes: 1 }))).toBe(
      true
    )
    expect(Compensable.isStepError(refused("step key"))).toBe(true)
    expect(Compensable.isStepError(refused("saga id"))).toBe(false) // Saga.run's, not a call's
    expect(Compensable.isStepError(refused("effect id"))).toBe(false)
    expect(Compensable.isStepError(new Compensable.DeclarationError({ toolName: "t", reason: "r" }))).toBe(false)
    expect(Compensable.isStepError({ _tag: "InvalidInput", toolName: "t", reason: "r" })).toBe(false)
  })

  it("Compensable.isCompensableError says what its type says: its module's three errors, not a refused step key", () => {
    const u: unknown = new SagaError.InvalidIdentifier({ kind: "step key", identifier: '""', reason: "it is empty" })
    expect(Compensable.isCompensableError(u)).toBe(false)
    if (Compensable.isCompensableError(u)) {
      // @ts-expect-error the guard's type holds DeclarationError, InvalidInput and PayloadTooLarge only
      expect(u._tag === "InvalidIdentifier").toBe(false)
    }
  })

  it("an outcome decoded from its encoded form is an instance again, and passes the guard", () => {
    const decoded = Schema.decodeUnknownSync(Outcome.Failed)({ _tag: "OutcomeFailed", reason: "card declined" })
    expect(decoded).toBeInstanceOf(Outcome.Failed)
    expect(Outcome.isOutcome(decoded)).toBe(true)
  })

  it.effect("a FAILED entry journals the encoded outcome, as before the type ids", () =>
    Effect.gen(function* () {
      yield* Saga.run("guards-1", Effect.either(Charge({ cents: 500 })))
      const journal = yield* Journal.Journal
      const failed = (yield* journal.read("guards-1")).filter((entry) => entry.phase === "FAILED")
      expect(failed.map((entry) => entry.payload)).toEqual([
        '{"description":"failed (not applied): card declined","defect":false,"error":{"reason":"card declined","_tag":"OutcomeFailed"}}'
      ])
    }).pipe(Effect.provide(Testing.layer))
  )
})

interface AnyError {
  readonly _tag: string
}

interface Family {
  readonly name: string
  readonly guard: (u: unknown) => boolean
  readonly members: ReadonlyArray<AnyError>
  /** The families this guard's members belong to as well (a guard of one error in a family of several). */
  readonly kin?: ReadonlyArray<string>
}

/** Whether one family's members may pass the other's guard: one of them is the other's member guard. */
const related = (a: Family, b: Family) => a.kin?.includes(b.name) === true || b.kin?.includes(a.name) === true

const families: ReadonlyArray<Family> = [
  {
    name: "Journal",
    guard: Journal.isJournalError,
    members: [
      new Journal.ConcurrencyConflict({ sagaId: "s", expectedRevision: 1, actualRevision: 2 }),
      new Journal.LeaseHeld({ sagaId: "s", owner: "w", expiresAt: "2025-01-01T00:00:00.000Z" }),
      new Journal.JournalError({ operation: "append", reason: "disk full" }),
      new Journal.JournalCorrupted({ sagaId: "s", seq: 1, reason: "not an entry" }),
      new Journal.JournalTampered({ sagaId: "s", seq: 1, problem: "hash", reason: "edited" }),
      new Journal.SagaNotFound({ sagaId: "s" })
    ]
  },
  {
    name: "SagaError",
    guard: SagaError.isSagaError,
    members: [
      new SagaError.NonDeterminism({ sagaId: "s", stepId: "a", reason: "another tool" }),
      new SagaError.StepFailed({ stepId: "a", toolName: "t", reason: "r" }),
      new SagaError.ApprovalRefused({ stepId: "a", toolName: "t", reason: "rejected" }),
      new SagaError.ApprovalPending({ sagaId: "s", stepId: "a", toolName: "t", requestId: "s/a" }),
      new SagaError.InvalidSagaInput({ sagaId: "s", definition: "d", reason: "r" }),
      new SagaError.CommandRefused({ sagaId: "s", stepId: "a", reason: "r" }),
      new SagaError.CommandConflict({ sagaId: "s", stepId: "a", answer: "approved by alice" }),
      new SagaError.EffectNotFound({ effectId: "s/a" }),
      new SagaError.InvalidIdentifier({ kind: "step key", identifier: '""', reason: "it is empty" }),
      new SagaError.InvalidWorkerOptions({ option: "leaseTtl", reason: "0 is not a positive, finite duration" })
    ]
  },
  {
    name: "Approval",
    guard: Approval.isApprovalError,
    members: [
      new Approval.ApprovalNotFound({ requestId: "s/a" }),
      new Approval.AlreadyDecided({ requestId: "s/a", decision: "rejected" }),
      new Approval.NotApproved({ requestId: "s/a" }),
      new Approval.ApprovalMismatch({ requestId: "s/a", approvedDigest: "d1", inputDigest: "d2" })
    ]
  },
  {
    name: "Compensable",
    guard: Compensable.isCompensableError,
    members: [
      new Compensable.DeclarationError({ toolName: "t", reason: "r" }),
      new Compensable.InvalidInput({ toolName: "t", reason: "r" }),
      new Compensable.PayloadTooLarge({ toolName: "t", bytes: 2, maxBytes: 1 })
    ]
  },
  {
    name: "Outcome",
    guard: Outcome.isOutcome,
    members: [Outcome.failed("declined"), Outcome.unknown("timed out"), Outcome.partial("one of two")]
  },
  {
    name: "Authority",
    guard: Authority.isUnauthorized,
    members: [new Authority.Unauthorized({ principal: "p", action: "approve", sagaId: "s", stepId: null })]
  },
  {
    name: "Recovery",
    guard: Recovery.isRecoveryError,
    members: [
      new Recovery.Unrecoverable({ sagaId: "s", reason: "no definition" }),
      new Recovery.InvalidRecoveryOptions({ option: "every", reason: "is 0" })
    ]
  },
  {
    name: "Recovery.Unrecoverable",
    guard: Recovery.isUnrecoverable,
    members: [new Recovery.Unrecoverable({ sagaId: "s", reason: "no definition" })],
    kin: ["Recovery"]
  },
  {
    name: "Recovery.InvalidRecoveryOptions",
    guard: Recovery.isInvalidRecoveryOptions,
    members: [new Recovery.InvalidRecoveryOptions({ option: "every", reason: "is 0" })],
    kin: ["Recovery"]
  },
  {
    name: "SagaApi",
    guard: SagaApi.isSagaApiError,
    members: [
      new SagaApi.Malformed({ message: "invalid saga id" }),
      new SagaApi.Unauthenticated({ message: "no credentials" }),
      new SagaApi.Forbidden({ message: "not allowed" }),
      new SagaApi.NotFound({ message: "no saga s" }),
      new SagaApi.Conflict({ message: "the saga moved on" }),
      new SagaApi.TooLarge({ message: "over the limit" }),
      new SagaApi.Refused({ message: "not awaiting approval" }),
      new SagaApi.Unavailable({ message: "the store is down" }),
      new SagaApi.Internal({ message: "the server failed" }),
      new SagaApi.InvalidApiOptions({ option: "maxBodyBytes", reason: "is 0" }),
      new SagaApi.InsecureServer({ host: "0.0.0.0", reason: "no authentication layer" })
    ]
  },
  {
    name: "SagaApi.InvalidApiOptions",
    guard: SagaApi.isInvalidApiOptions,
    members: [new SagaApi.InvalidApiOptions({ option: "maxBodyBytes", reason: "is 0" })],
    kin: ["SagaApi"]
  },
  {
    name: "SagaApi.InsecureServer",
    guard: SagaApi.isInsecureServer,
    members: [new SagaApi.InsecureServer({ host: "0.0.0.0", reason: "no authentication layer" })],
    kin: ["SagaApi"]
  },
  {
    name: "Metrics",
    guard: Metrics.isInvalidMetricsOptions,
    members: [new Metrics.InvalidMetricsOptions({ option: "every", reason: "0 is not a positive duration" })]
  },
  {
    name: "Toolkit",
    guard: Toolkit.isUnknownTool,
    members: [new Toolkit.UnknownTool({ toolName: "t", known: ["u"] })]
  },
  {
    name: "Agent",
    guard: Agent.isAgentError,
    members: [
      new Agent.MaxTurnsExceeded({ maxTurns: 3 }),
      new Agent.InvalidLoopOptions({ option: "maxTurns", reason: "is 0" })
    ]
  },
  {
    name: "Agent.MaxTurnsExceeded",
    guard: Agent.isMaxTurnsExceeded,
    members: [new Agent.MaxTurnsExceeded({ maxTurns: 3 })],
    kin: ["Agent"]
  },
  {
    name: "Agent.InvalidLoopOptions",
    guard: Agent.isInvalidLoopOptions,
    members: [new Agent.InvalidLoopOptions({ option: "maxTurns", reason: "is 0" })],
    kin: ["Agent"]
  },
  {
    name: "Keys",
    guard: Keys.isKeyError,
    members: [new Keys.KeyError({ variable: Keys.JOURNAL_KEYS, reason: "not base64" })]
  }
]

/** An error's encoded form, through its own class's schema: a plain object with its tag and fields. */
const encode = (error: AnyError): AnyError & Record<string, unknown> =>
  Schema.encodeSync(error.constructor as unknown as Schema.Schema<AnyError, AnyError & Record<string, unknown>>)(error)

/**
 * The fields an error was made with: its own string keys (a spread would copy its type id too), and
 * a `message` field, which an error keeps as its own, not enumerable.
 */
const fieldsOf = (error: AnyError): Record<string, unknown> => {
  const message = Object.getOwnPropertyDescriptor(error, "message")
  return { ...Object.fromEntries(Object.entries(error)), ...(message === undefined ? {} : { message: message.value }) }
}

const Charge = Compensable.make({
  name: "Charge",
  input: Schema.Struct({ cents: Schema.Number }),
  success: Schema.String,
  execute: () => Effect.fail(Outcome.failed("card declined")),
  compensate: () => Effect.void
})
