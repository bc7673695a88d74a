/**
 * A binding as a tool: its forward call and, when its contract names one, its inverse — each one
 * call of a handler process, whose answer becomes the step's result, receipt or `Outcome`.
 */
import * as CommandExecutor from "@effect/platform/CommandExecutor"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as Compensable from "../../Compensable.js"
import type { Manifest } from "../../Manifest.js"
import * as Outcome from "../../Outcome.js"
import { composedOfMasked, masked } from "../util/masking.js"
import { environmentOf, launchOf, missingSecret } from "./environment.js"
import type { Binding, HandlerRequest, HandlerResponse } from "./format.js"
import { PROTOCOL } from "./format.js"
import { type Answer, answeredMask, run } from "./process.js"
import { executorOf } from "./processes.js"
import { type Registered, schemaOf, type TypeProblem } from "./types.js"

/** A binding's input and output Schemas. */
interface Typed {
  readonly name: string
  readonly binding: Binding
  readonly input: Schema.Schema<any, any>
  readonly output: Schema.Schema<any, any>
}

/** Why a binding cannot be a tool: the path from the manifest's root, and the reason. */
export interface ToolProblem {
  readonly path: ReadonlyArray<PropertyKey>
  readonly reason: string
}

const typedOf = (name: string, binding: Binding, registered: Registered): Either.Either<Typed, ToolProblem> => {
  const at = (role: "input" | "output") => (problem: TypeProblem) => ({
    path: ["bindings", name, role, ...problem.path],
    reason: problem.reason
  })
  return Either.all({
    input: Either.mapLeft(schemaOf(binding.input, registered), at("input")),
    output: Either.mapLeft(schemaOf(binding.output, registered), at("output"))
  }).pipe(Either.map(({ input, output }) => ({ name, binding, input, output })))
}

/** Every binding of the manifest as a tool, or the first that cannot be one. */
export const toolsOf = (
  manifest: Manifest,
  registered: Registered
): Either.Either<Record<string, Compensable.Any>, ToolProblem> => {
  const typed: Record<string, Typed> = {}
  for (const [name, binding] of Object.entries(manifest.bindings)) {
    const one = typedOf(name, binding, registered)
    if (Either.isLeft(one)) return Either.left(one.left)
    typed[name] = one.right
  }
  const tools: Record<string, Compensable.Any> = {}
  for (const tool of Object.values(typed)) {
    const inverse = tool.binding.effect_contract.compensation?.tool
    tools[tool.name] = toolOf(manifest, tool, inverse === undefined ? undefined : typed[inverse])
  }
  return Either.right(tools)
}

const toolOf = (manifest: Manifest, tool: Typed, inverse: Typed | undefined): Compensable.Any => {
  const contract = tool.binding.effect_contract
  return Compensable.make({
    name: tool.name,
    input: tool.input,
    success: tool.output,
    reversibility:
      contract.kind === "irreversible" ? "irreversible" : contract.kind === "read" ? "reversible" : "compensatable",
    changesNothing: contract.kind === "read",
    retryMode: contract.retry_mode === "idempotency_key" ? "idempotency-key" : "none",
    maxPayloadBytes: tool.binding.max_payload_bytes,
    // Journaled with the step's `INTENT`: what the process was allowed, before it starts.
    capabilities: tool.binding.grants,
    // And the inverse's with the undo's `COMPENSATING`: the audit trail says what the undo was allowed.
    undoCapabilities: inverse?.binding.grants,
    // Its outcomes say what the handler wrote masked already (`shown`, `process.ts`): the engine
    // does not mask them again, so the words around that stay readable.
    execute: (input: unknown, step: Compensable.StepContext) =>
      Effect.mapError(execute(manifest, tool, input, step), composedOfMasked),
    compensate:
      inverse === undefined
        ? undefined
        : (ctx: Compensable.CompensationContext) =>
            Effect.mapError(compensate(manifest, tool, inverse, ctx), composedOfMasked)
  } as Compensable.MakeOptions<string, any, any, any, any, never, never, never, never>)
}

const execute = (manifest: Manifest, tool: Typed, input: unknown, step: Compensable.StepContext) =>
  Effect.gen(function* () {
    const request: HandlerRequest = {
      protocol: PROTOCOL,
      operation: "execute",
      tool: tool.name,
      input: Schema.encodeSync(tool.input)(input),
      effect: { sagaId: step.sagaId, stepId: step.stepId, idempotencyKey: step.idempotencyKey }
    }
    const { answer, mask } = yield* call(manifest, tool, request, [])
    const response = yield* responseOf(tool, "execute", answer)
    const label = labelOf(tool, "execute")
    switch (response.outcome) {
      case "applied": {
        const result = Schema.decodeUnknownEither(tool.output)(response.result ?? null)
        if (Either.isLeft(result)) {
          return yield* Outcome.unknown(`${label} answered applied with a result that does not fit its output type`)
        }
        if (response.receipt !== undefined) yield* step.setReceipt(Redacted.make(response.receipt))
        return result.right
      }
      case "partial":
        return yield* Outcome.partial(`${label}: ${shown(response, mask, "applied in part")}`)
      default:
        return yield* outcomeOf(label, response, mask)
    }
  })

const compensate = (manifest: Manifest, tool: Typed, inverse: Typed, ctx: Compensable.CompensationContext) =>
  Effect.gen(function* () {
    const label = labelOf(inverse, "compensate")
    const originalResult = Schema.encodeSync(tool.output)(ctx.result)
    const input = Schema.decodeUnknownEither(inverse.input)(originalResult)
    if (Either.isLeft(input)) {
      return yield* Outcome.failed(`${label}: the result of ${tool.name} does not fit its input type`)
    }
    const receipt = Option.map(ctx.receipt, Redacted.value)
    const request: HandlerRequest = {
      protocol: PROTOCOL,
      operation: "compensate",
      tool: inverse.name,
      input: Schema.encodeSync(inverse.input)(input.right),
      effect: { sagaId: ctx.sagaId, stepId: ctx.stepId, idempotencyKey: ctx.idempotencyKey },
      compensation: {
        originalInput: JSON.parse(ctx.inputJson),
        originalResult,
        originalReceipt: Option.getOrUndefined(receipt)
      }
    }
    const { answer, mask } = yield* call(manifest, inverse, request, Option.toArray(receipt))
    const response = yield* responseOf(inverse, "compensate", answer)
    if (response.outcome === "applied" && response.compensation !== "partial") return response.result ?? null
    if (response.outcome === "applied" || response.outcome === "partial") {
      return yield* Outcome.partial(`${label}: ${shown(response, mask, "compensated in part")}`)
    }
    return yield* outcomeOf(label, response, mask)
  })

const labelOf = (tool: Typed, operation: HandlerRequest["operation"]) => `binding ${tool.name} (${operation})`

/**
 * Starts the binding's process with its own environment and sends it the request, with the executor
 * `Manifest.layer` was built with (`executorOf`).
 */
const call = (manifest: Manifest, tool: Typed, request: HandlerRequest, alsoMasked: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const label = labelOf(tool, request.operation)
    const executor = yield* executorOf
    if (Option.isNone(executor)) {
      // Only a call made against its type gets here: it needs `ManifestProcesses` (`Manifest.layer`).
      return yield* Outcome.failed(`${label}: no CommandExecutor to start it with (provide Manifest.layer)`)
    }
    const launch = launchOf(tool.binding, manifest.folder)
    if (Either.isLeft(launch)) return yield* Outcome.failed(`${label}: ${launch.left.reason}`)
    const environment = yield* Effect.catchAll(environmentOf(tool.binding), () =>
      Effect.flatMap(missingSecret(tool.binding), (missing) =>
        Outcome.failed(
          `${label}: ${Option.match(missing, { onNone: () => "a secret it names", onSome: ([, name]) => `the secret ${name} it names` })} is not set`
        )
      )
    )
    const secrets = [...environment.secrets, ...alsoMasked]
    const answer = yield* run({
      label,
      launch: launch.right,
      environment,
      request: JSON.stringify(request),
      timeoutMs: tool.binding.timeout_ms,
      maxBytes: tool.binding.max_payload_bytes,
      mask: secrets
    }).pipe(Effect.provideService(CommandExecutor.CommandExecutor, executor.value))
    // The receipt it answers with is as secret in its message as the ones it was given.
    return { answer, mask: answeredMask(secrets, answer) }
  })

/**
 * The handler's response, or the `Outcome` of a call that did not get one. A line of no outcome
 * (`Malformed`) fails a forward call; an undo's is unknown: nothing says whether it undid.
 */
const responseOf = (
  tool: Typed,
  operation: HandlerRequest["operation"],
  answer: Answer
): Effect.Effect<HandlerResponse, Outcome.Outcome> => {
  const label = labelOf(tool, operation)
  switch (answer._tag) {
    case "Answered":
      return Effect.succeed(answer.response)
    // The reasons of `process.ts` mask what they quote of the handler's output.
    case "Unknown":
      return Outcome.unknown(`${label}: ${answer.reason}`)
    case "Malformed": {
      const reason = `${label}: its output is not one JSON line of ${PROTOCOL}: ${answer.reason}`
      return operation === "compensate" ? Outcome.unknown(reason) : Outcome.failed(reason)
    }
    case "NotStarted":
      return Outcome.failed(`${label}: not started: ${answer.reason}`)
  }
}

/** The handler's own message, secrets masked, or what its outcome says. */
const shown = (response: HandlerResponse, mask: ReadonlyArray<string>, otherwise: string) =>
  response.message === undefined ? otherwise : masked(response.message, mask)

const outcomeOf = (label: string, response: HandlerResponse, mask: ReadonlyArray<string>): Outcome.Outcome =>
  response.outcome === "failed"
    ? Outcome.failed(`${label}: ${shown(response, mask, "the handler says it was not applied")}`)
    : Outcome.unknown(`${label}: ${shown(response, mask, "the handler cannot say whether it was applied")}`)
