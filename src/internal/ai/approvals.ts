import * as Prompt from "@effect/ai/Prompt"
import type * as Tool from "@effect/ai/Tool"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { CurrentSaga } from "../../Saga.js"
import { ApprovalRefused } from "../../SagaError.js"
import type { PendingCall } from "./toolCall.js"

/** A value as JSON, encoded with the tool's schema (the journal encoded it with the same). */
const jsonOf = (schema: Schema.Schema.All, value: unknown) =>
  Effect.map(Effect.orDie(Schema.encodeUnknown(schema as Schema.Schema<unknown, unknown>)(value)), (encoded) =>
    JSON.stringify(encoded)
  )

/**
 * Runs a call that awaited approval, once approved, and says how it went, for the model. A failure
 * the tool feeds to the model (`failureMode: "return"`) is told; any other fails the conversation as
 * the tool's handler would have. A call the saga refused to run (a failure bound it to compensate
 * meanwhile) is told so, and why.
 */
const settleOne = (saga: CurrentSaga["Type"], call: PendingCall, tool: Tool.Any) => {
  const told = `The call ${call.callId} of ${call.toolName} was approved and has run`
  const declared = Schema.is(tool.failureSchema as Schema.Schema<unknown>)
  return saga.settle(call.stepId).pipe(
    Effect.flatMap((value) => Effect.map(jsonOf(tool.successSchema, value), (json) => `${told}. Its result: ${json}`)),
    Effect.catchAll((error) => {
      if (error instanceof ApprovalRefused) {
        return Effect.succeed(`The call ${call.callId} of ${call.toolName} was ${error.reason}`)
      }
      if (!declared(error)) return Effect.die(error)
      if (tool.failureMode !== "return") return Effect.fail(error)
      return Effect.map(jsonOf(tool.failureSchema, error), (json) => `${told}, and failed: ${json}`)
    })
  )
}

/**
 * Settles the calls of a conversation that awaited approval, in the order they were made: halts the
 * saga (`AwaitingApproval`) while one is not approved; once approved, runs each and answers with a
 * user message that tells the model how each went.
 */
export const settle = (
  calls: ReadonlyArray<PendingCall>,
  tools: Readonly<Record<string, Tool.Any>>
): Effect.Effect<Prompt.Prompt, unknown> =>
  Effect.flatMap(Effect.serviceOption(CurrentSaga), (saga) =>
    Option.isNone(saga)
      ? Effect.dieMessage("effect-saga: a call awaits approval outside a saga")
      : Effect.map(
          Effect.forEach(calls, (call) => settleOne(saga.value, call, tools[call.toolName]!)),
          (lines) => Prompt.make(lines.join("\n"))
        )
  )
