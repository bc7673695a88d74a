import * as McpSchema from "@effect/ai/McpSchema"
import * as McpServer from "@effect/ai/McpServer"
import * as Tool from "@effect/ai/Tool"
import type * as Toolkit from "@effect/ai/Toolkit"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { Policy } from "./policy.js"

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

const text = (value: unknown): string => JSON.stringify(value) ?? "null"

/**
 * Registers an agent's tools with the `McpServer` in context. A call runs the wrapped handler (a
 * step of the saga in the registering context); a failure the model would be fed
 * (`failureMode: "return"`) is reported with `isError: true`, like one in the error channel.
 */
export const register = (
  toolkit: Toolkit.Toolkit<any>,
  policies: Readonly<Record<string, Policy>>
): Effect.Effect<void, never, any> =>
  Effect.gen(function* () {
    const server = yield* McpServer.McpServer
    const built = (yield* toolkit) as Toolkit.WithHandler<Record<string, Tool.Any>>
    const context = yield* Effect.context<never>()
    const handle = built.handle as unknown as (
      name: string,
      params: unknown
    ) => Effect.Effect<Tool.HandlerResult<Tool.Any>, unknown>
    for (const tool of Object.values(built.tools)) {
      yield* server.addTool({
        tool: new McpSchema.Tool({
          name: tool.name,
          description: Tool.getDescription(tool as any),
          inputSchema: Tool.getJsonSchema(tool as any),
          annotations: hintsOf(tool, policies[tool.name]!)
        }),
        handle: (payload) =>
          handle(tool.name, payload).pipe(
            Effect.provide(context),
            Effect.match({
              onFailure: (error) =>
                new McpSchema.CallToolResult({
                  isError: true,
                  structuredContent: typeof error === "object" ? error : undefined,
                  content: [{ type: "text", text: text(error) }]
                }),
              onSuccess: (result) =>
                new McpSchema.CallToolResult({
                  isError: result.isFailure,
                  structuredContent: typeof result.encodedResult === "object" ? result.encodedResult : undefined,
                  content: [{ type: "text", text: text(result.encodedResult) }]
                })
            })
          ) as Effect.Effect<McpSchema.CallToolResult>
      })
    }
  })
