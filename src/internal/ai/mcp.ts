import * as McpSchema from "@effect/ai/McpSchema"
import * as McpServer from "@effect/ai/McpServer"
import * as Tool from "@effect/ai/Tool"
import type * as Toolkit from "@effect/ai/Toolkit"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { Policy } from "../../Agent.js"
import * as Compensable from "../../Compensable.js"
import { CurrentSaga } from "../../Saga.js"
import { withoutSpan } from "../observability/spans.js"
import { cutDetail, defectLine } from "../util/detail.js"
import { awaitingApproval, handleUntraced, notRun, toolCall } from "./toolCall.js"

/** The MCP hints of a tool, as its saga policy says. */
export const hintsOf = (tool: Tool.Any, policy: Policy): McpSchema.ToolAnnotations =>
  new McpSchema.ToolAnnotations({
    ...Option.match(Context.getOption(tool.annotations, Tool.Title), {
      onNone: () => ({}),
      onSome: (title) => ({ title })
    }),
    readOnlyHint: policy.readonly,
    destructiveHint: policy.reversibility === "irreversible",
    idempotentHint: policy.retryMode === "idempotency-key",
    openWorldHint: Context.get(tool.annotations, Tool.OpenWorld)
  })

/**
 * A call's answer: its value as text, and as `structuredContent` where it is a JSON object (MCP's
 * `structuredContent` is an object: an array or a scalar is the text alone).
 */
const callResult = (isError: boolean, value: unknown) =>
  new McpSchema.CallToolResult({
    isError,
    structuredContent: typeof value === "object" && value !== null && !Array.isArray(value) ? value : undefined,
    content: [{ type: "text", text: JSON.stringify(value) ?? "null" }]
  })

/**
 * What the client is told of a call that died (an input over `maxPayloadBytes`, one that does not
 * encode, a handler's defect): that it failed, in the defect's first line, cut as a journaled
 * defect's reason is.
 */
const diedResult = (cause: Cause.Cause<unknown>) =>
  callResult(true, { status: "failed", reason: cutDetail(defectLine(cause)) })

/** What the client is told in place of a handler's result. */
interface AnsweredInstead {
  readonly isFailure: boolean
  readonly encodedResult: unknown
}

/** A call that awaits approval is not an error: the client is told it has not run yet. */
const awaitingApprovalResult: AnsweredInstead = { isFailure: false, encodedResult: awaitingApproval }

/**
 * Registers an agent's tools with the `McpServer` in context. A call runs the wrapped handler (a
 * step of the saga in the registering context), without `Toolkit.handle`'s span; a failure the model would be fed
 * (`failureMode: "return"`) is reported with `isError: true`, like one in the error channel; a call
 * that awaits approval is told so (not an error), and the session goes on; one the saga refused to
 * run (it was bound to compensate) is told so and why, with `isError: true`; one that died is told
 * it failed (`isError: true`, the defect's first line) and reported to `died`, so that a session
 * can fail its saga with it when it ends.
 */
export const register = (
  toolkit: Toolkit.Toolkit<any>,
  policies: Readonly<Record<string, Policy>>,
  died: (cause: Cause.Cause<unknown>) => void = () => {}
): Effect.Effect<void, never, any> =>
  Effect.gen(function* () {
    const server = yield* McpServer.McpServer
    const built = (yield* toolkit) as Toolkit.WithHandler<Record<string, Tool.Any>>
    // The services the server was built with; not its span: a call's spans belong to the call.
    const context = withoutSpan(yield* Effect.context<never>())
    for (const tool of Object.values(built.tools)) {
      yield* server.addTool({
        tool: new McpSchema.Tool({
          name: tool.name,
          description: Tool.getDescription(tool as any),
          inputSchema: Tool.getJsonSchema(tool as any),
          annotations: hintsOf(tool, policies[tool.name]!)
        }),
        handle: (payload) => {
          const call = toolCall(undefined)
          return handleUntraced(built, tool.name, payload, call).pipe(
            Effect.provide(context),
            Effect.catchAllCause(
              (cause): Effect.Effect<AnsweredInstead, unknown> =>
                call.pending !== undefined
                  ? Effect.succeed(awaitingApprovalResult)
                  : call.refused !== undefined
                    ? Effect.succeed({ isFailure: true, encodedResult: notRun(call.refused) })
                    : Effect.failCause(cause)
            ),
            Effect.matchCauseEffect({
              onFailure: (cause) =>
                Option.match(Cause.failureOption(cause), {
                  onSome: (error) => Effect.succeed(callResult(true, error)),
                  // A halt (an unknown outcome) ends the session, as it ends any run.
                  onNone: () =>
                    Cause.isInterruptedOnly(cause)
                      ? Effect.failCause(cause)
                      : Effect.sync(() => {
                          died(cause)
                          return diedResult(cause)
                        })
                }),
              onSuccess: (result) => Effect.succeed(callResult(result.isFailure, result.encodedResult))
            })
          ) as Effect.Effect<McpSchema.CallToolResult>
        }
      })
    }
  })

/**
 * Whether this run of a session's saga serves it: yes the first time; no once the saga resumes
 * (after an approval, or recovered after a crash), since the client it served is gone. A step that
 * changes nothing marks it in the journal.
 */
export const opensSession = Effect.suspend(() => {
  let opened = false
  const marker = Compensable.make({
    name: "McpSession",
    input: Schema.Null,
    success: Schema.Null,
    reversibility: "reversible",
    retryMode: "idempotency-key",
    changesNothing: true,
    execute: () =>
      Effect.sync(() => {
        opened = true
        return null
      })
  })
  // A null input cannot be refused: any failure here is a defect.
  return Effect.flatMap(Effect.orDie(marker(null, { key: "opened" })), () =>
    opened
      ? Effect.succeed(true)
      : Effect.as(
          Effect.flatMap(CurrentSaga, (saga) => saga.servesNothingAgain()),
          false
        )
  )
})
