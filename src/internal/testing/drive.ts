/**
 * What a service and its operators do with one saga until it ends: start it (a saga that exists is
 * resumed), answer its approval request, settle its unknown steps, start it again.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import * as Saga from "../../Saga.js"
import type * as SagaDefinition from "../../SagaDefinition.js"
import type { SagaResult, UnknownStep } from "../../SagaResult.js"
import type { ApprovalAnswer, OperatorAnswer } from "../../Testing.js"
import { encodeJson } from "../util/codec.js"
import type { Ledger } from "./crash.js"

/** How long an approval given to be let expire lasts, and how far the test clock is then moved. */
const expiresIn = 1_000
const expiredAfter = "2 seconds"

/** The operator's answer for an unknown step: the user's, or what the explorer saw the tool do. */
export type Resolver<W> = (step: UnknownStep) => Effect.Effect<OperatorAnswer, unknown, W>

/** Why a drive stopped before the saga ended. */
export class DriveProblem {
  readonly _tag = "DriveProblem"
  constructor(readonly reason: string) {}
}

/** The operators' whole say in one drive. */
export interface Operators<W> {
  readonly approval: ApprovalAnswer
  readonly resolve: Resolver<W>
  readonly ledger: Ledger
}

const rounds = 20

const answerApproval = (sagaId: string, stepId: string, answer: ApprovalAnswer) =>
  Effect.gen(function* () {
    switch (answer) {
      case "approve":
        return yield* Saga.approve(sagaId, stepId, { by: "effect-saga/explore" })
      case "reject":
        return yield* Effect.asVoid(Saga.reject(sagaId, stepId, { by: "effect-saga/explore", reason: "rejected" }))
      case "expire": {
        const now = yield* Clock.currentTimeMillis
        const expiresAt = new Date(now + expiresIn).toISOString()
        yield* Saga.approve(sagaId, stepId, { by: "effect-saga/explore", expiresAt })
        return yield* TestClock.adjust(expiredAfter)
      }
    }
  })

/** `applied`, with the result the tool was seen to return (encoded as the journal encodes it). */
const appliedResolution = (ledger: Ledger, step: UnknownStep) => {
  const seen = ledger.steps.get(step.stepId)
  const returned = seen === undefined ? Option.none() : seen.returned
  if (seen === undefined || Option.isNone(returned)) {
    return Effect.fail(
      new DriveProblem(
        `the operator resolved ${step.toolName} (${step.stepId}) as applied, but no call of it returned a result to resolve it with`
      )
    )
  }
  const encoded = encodeJson(seen.spec.success, returned.value)
  return Either.isLeft(encoded)
    ? Effect.fail(new DriveProblem(`the result ${step.toolName} returned does not encode: ${encoded.left}`))
    : Effect.succeed({ outcome: "applied" as const, by: "effect-saga/explore", result: JSON.parse(encoded.right) })
}

const settleUnknown = <W>(sagaId: string, steps: ReadonlyArray<UnknownStep>, operators: Operators<W>) =>
  Effect.gen(function* () {
    for (const step of steps) {
      const answer = yield* operators.resolve(step)
      if (answer === "compensate") return yield* Effect.asVoid(Saga.compensate(sagaId))
      const resolution =
        answer === "applied"
          ? yield* appliedResolution(operators.ledger, step)
          : { outcome: "not-applied" as const, by: "effect-saga/explore" }
      yield* Saga.resolve(sagaId, step.stepId, resolution)
    }
  })

/** The truthful operator: asks what happened and is told what the explorer saw the tool do. */
export const truthfully =
  (ledger: Ledger): Resolver<never> =>
  (step) =>
    Effect.succeed(Option.isSome(ledger.steps.get(step.stepId)?.returned ?? Option.none()) ? "applied" : "not-applied")

/**
 * Starts the saga, answers what it waits for, and starts it again, until it completes, is
 * compensated or its compensation fails. `onApproval` is told when the saga asks for one.
 */
export const drive = <I, A, E, R, W>(
  definition: SagaDefinition.SagaDefinition<I, A, E, R>,
  sagaId: string,
  input: I,
  operators: Operators<W>,
  onApproval: () => void
) =>
  Effect.gen(function* () {
    for (let round = 0; round < rounds; round++) {
      const result: SagaResult<A, E> = yield* Saga.start(definition, sagaId, input)
      switch (result._tag) {
        case "AwaitingApproval":
          onApproval()
          yield* answerApproval(sagaId, result.request.stepId, operators.approval)
          break
        case "NeedsAttention":
          yield* settleUnknown(sagaId, result.unknown, operators)
          break
        case "Suspended":
          break
        default:
          return result
      }
    }
    return yield* Effect.fail(new DriveProblem(`the saga did not end after ${rounds} rounds of answers`))
  })
