import * as AiError from "@effect/ai/AiError"
import type * as LanguageModel from "@effect/ai/LanguageModel"
import { GenerateObjectResponse, GenerateTextResponse } from "@effect/ai/LanguageModel"
import * as Prompt from "@effect/ai/Prompt"
import * as Response from "@effect/ai/Response"
import type * as Tool from "@effect/ai/Tool"
import * as Toolkit from "@effect/ai/Toolkit"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Option from "effect/Option"
import type * as ParseResult from "effect/ParseResult"
import type * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import type { ModelOptions } from "../../Agent.js"
import * as Compensable from "../../Compensable.js"
import type * as Outcome from "../../Outcome.js"
import { CurrentSaga } from "../../Saga.js"
import type { ApprovalPending, ApprovalRefused } from "../../SagaError.js"
import { checkTool } from "../../Toolkit.js"
import type { StepSpec } from "../engine/spec.js"
import { byteLength, NESTED_TOO_DEEP, nestsTooDeep, problemIn } from "../util/codec.js"
import { promptLogOf } from "./promptLog.js"
import { replayedAnswer } from "./replayedAnswer.js"
import { MODULE, turnFailureDescription, turnFailureInSpan, withModelCallSpanMasked } from "./spans.js"
import { awaitingApproval, handleUntraced, notRun, pendingCalls, toolCall } from "./toolCall.js"

type Method = "generateText" | "generateObject" | "streamText"

type Saga = CurrentSaga["Type"]

/** Thrown for a prompt or an answer nested deeper than the journal takes (`MAX_JSON_DEPTH`). */
class NestedTooDeep extends Error {}

/**
 * Bytes (file parts of a prompt) as JSON: base64 in an object of their own. Throws `NestedTooDeep`
 * for a value nested deeper than the journal takes (which `JSON.parse` accepts from a provider; a
 * fixed depth, so that a turn is refused alike at any depth of the stack, its replay's too), and
 * what `JSON.stringify` throws (see `unserializable`).
 */
const jsonSafe = (value: unknown): unknown => {
  if (nestsTooDeep(value)) throw new NestedTooDeep()
  return JSON.parse(
    JSON.stringify(value, (_key, inner) =>
      inner instanceof Uint8Array ? { $bytes: Buffer.from(inner).toString("base64") } : inner
    ) ?? "null"
  )
}

/**
 * Why a prompt or an answer has no JSON: nested too deep (also a `RangeError`, the stack running out
 * under it), or what else `JSON.stringify` threw, quoted (a `BigInt` in provider metadata).
 */
const unserializable = (error: unknown): string =>
  error instanceof NestedTooDeep || error instanceof RangeError
    ? NESTED_TOO_DEEP
    : `not serializable as JSON (${String(error)})`

const malformed = (method: Method, description: string) => (error: ParseResult.ParseError) =>
  AiError.MalformedOutput.fromParseError({ module: MODULE, method, description, error })

/**
 * A turn's failure as `@effect/ai` types a model call's (`AiError`), the original its `cause`: a
 * prompt over `maxPayloadBytes` (`PayloadTooLarge`: the model was not asked) is a `MalformedInput`;
 * anything else the step fails with besides an `AiError` (an `Outcome`: a timeout) is an
 * `UnknownError`. A replayed failure maps the same way.
 */
const asAiError =
  (method: Method) =>
  (error: unknown): AiError.AiError => {
    if (AiError.isAiError(error)) return error
    if (error instanceof Compensable.PayloadTooLarge) {
      return new AiError.MalformedInput({
        module: MODULE,
        method,
        description: `the turn's prompt is ${error.bytes} bytes encoded, over the turn's maxPayloadBytes of ${error.maxBytes}: it cannot be journaled, and the model was not asked`,
        cause: error
      })
    }
    const message = error instanceof Error ? error.message : String(error)
    return new AiError.UnknownError({
      module: MODULE,
      method,
      description: `the model call did not answer: ${message}`,
      cause: error
    })
  }

/**
 * The step of one model turn. Its input is what the model is asked (method, prompt, tools offered,
 * tool choice); its result the model's answer, encoded with `@effect/ai`'s response schemas. A turn
 * changes nothing in the world: asking again after a crash is safe (`retryMode: "idempotency-key"`),
 * it is journaled as changing nothing (compensation passes over it), and a failed turn is the program's to handle (it does not taint the saga).
 * A replayed answer that `unfollowable` refuses fails the run with `NonDeterminism`.
 */
const turnSpec = (
  options: ModelOptions,
  execute: () => Effect.Effect<unknown, AiError.AiError>,
  unfollowable?: (answer: unknown) => string | undefined
): StepSpec => {
  const made: Compensable.Any = Compensable.make({
    name: options.name ?? "LanguageModel",
    input: Schema.Unknown,
    success: Schema.Unknown,
    failure: AiError.AiError,
    reversibility: "reversible",
    retryMode: "idempotency-key",
    timeout: options.timeout,
    // `execute` fails with an `AiError` only: the schedule is never fed the `Outcome.Partial` a tool may fail with.
    retry: options.retry as Schedule.Schedule<unknown, AiError.AiError | Outcome.Outcome, never> | undefined,
    maxPayloadBytes: options.maxPayloadBytes,
    execute,
    changesNothing: true
  })
  return {
    ...made.spec,
    taintsOnFailure: false,
    shownInSpan: turnFailureInSpan,
    describedAs: turnFailureDescription,
    unfollowable
  }
}

/**
 * The turn step as compensation sees it: what a `Saga` service registers so that an operator's
 * `Saga.compensate` in this process passes a saga's model turns cleanly (it never runs a turn).
 */
export const registeredTurn = (options: ModelOptions): Compensable.Any => {
  const spec = turnSpec(options, () =>
    Effect.dieMessage("effect-saga: a model turn registered for compensation was asked to run")
  )
  return { name: spec.name, reversibility: spec.reversibility, spec }
}

/**
 * The turn step as `registeredTurn` makes it, once its declaration is checked: a `timeout` that is
 * not a positive duration, a `maxPayloadBytes` that is not a positive integer or a `name` that
 * cannot be journaled fails with `DeclarationError`, as a tool's does when its toolkit is validated.
 */
export const checkedTurn = (options: ModelOptions): Effect.Effect<Compensable.Any, Compensable.DeclarationError> =>
  Effect.suspend(() => {
    const turn = registeredTurn(options)
    const problem = checkTool(turn).problem
    return problem === undefined
      ? Effect.succeed(turn)
      : Effect.fail(new Compensable.DeclarationError({ toolName: turn.name, reason: problem }))
  })

/**
 * The model's encoded answer as JSON, if it has JSON, fits `maxBytes` and holds no key named
 * `__proto__` (which a tool's `Schema.Record` parameters would decode as a prototype); else a `MalformedOutput`
 * the program handles (journaled `FAILED`): a turn changes nothing in the world, so an answer that
 * cannot be journaled is a failed turn, not one an operator must settle.
 */
const journalable =
  (method: Method, maxBytes: number) =>
  (encoded: unknown): Effect.Effect<unknown, AiError.AiError> => {
    const refused = (why: string) =>
      Effect.fail(
        new AiError.MalformedOutput({
          module: MODULE,
          method,
          description: `the model's answer ${why}: it cannot be journaled`
        })
      )
    let answer: unknown
    let bytes: number
    try {
      answer = jsonSafe(encoded)
      bytes = byteLength(JSON.stringify(answer))
    } catch (error) {
      return refused(`is ${unserializable(error)}`)
    }
    if (bytes > maxBytes) return refused(`is ${bytes} bytes encoded, over the turn's maxPayloadBytes of ${maxBytes}`)
    // What JSON gives back is data: only a key named `__proto__` (PROTO_KEY) is left to refuse.
    const problem = problemIn(answer)
    return problem === undefined ? Effect.succeed(answer) : refused(problem.replace(/^it /, ""))
  }

/**
 * What a turn asks, as journaled: the prompt as its conversation extended it (see `PromptLog`),
 * the tools offered and the tool choice. A replay that asks something else is `NonDeterminism`.
 */
const describeTurn = (
  saga: Saga,
  method: Method,
  prompt: Prompt.Prompt,
  toolkit: AnyToolkit | undefined,
  options: any
) =>
  Effect.flatMap(
    Effect.mapError(
      Schema.encode(Prompt.Prompt)(prompt),
      (cause) =>
        new AiError.MalformedInput({
          module: MODULE,
          method,
          description: "the prompt does not encode",
          cause
        })
    ),
    (encoded) =>
      Effect.try({
        try: () =>
          jsonSafe({
            method,
            prompt: promptLogOf(saga).describe(jsonSafe(encoded.content) as ReadonlyArray<unknown>),
            tools:
              toolkit === undefined
                ? []
                : Object.values(toolkit.tools as Record<string, Tool.Any>).map((tool) => tool.name),
            toolChoice: options.toolChoice ?? null,
            ...(method === "generateObject" ? { objectName: options.objectName ?? null } : {})
          }),
        catch: (cause) =>
          new AiError.MalformedInput({
            module: MODULE,
            method,
            description: `the turn's prompt is ${unserializable(cause)}: it cannot be journaled, and the model was not asked`,
            cause
          })
      })
  )

type AnyToolkit = Toolkit.WithHandler<any>

const resolveToolkit = (toolkit: unknown): Effect.Effect<AnyToolkit | undefined, any, any> =>
  toolkit === undefined
    ? Effect.succeed(undefined)
    : Effect.isEffect(toolkit)
      ? (toolkit as Effect.Effect<AnyToolkit, any, any>)
      : Effect.succeed(toolkit as AnyToolkit)

/**
 * Runs the tool calls of a journaled answer through the toolkit, each keyed by its call id, without
 * `Toolkit.handle`'s span (it carries the call's parameters). A handler that did not run as a saga
 * step (a plain `@effect/ai` handler) is a defect: replaying the turn would run it again.
 */
const resolveToolCalls = (
  answer: ReadonlyArray<any>,
  toolkit: AnyToolkit,
  concurrency: LanguageModel.GenerateTextOptions<any>["concurrency"]
) =>
  Effect.forEach(
    answer.filter((part) => part?.type === "tool-call" && part.providerExecuted !== true),
    (call: Response.ToolCallPartEncoded) => {
      const cell = toolCall(call.id)
      return handleUntraced(toolkit, call.name, call.params, cell).pipe(
        Effect.catchAllCause(
          (cause): Effect.Effect<AnsweredInstead, unknown> =>
            cell.pending !== undefined
              ? awaitingApprovalOf(call, cell.pending)
              : cell.refused !== undefined
                ? Effect.succeed(notRunOf(cell.refused))
                : Effect.failCause(cause)
        ),
        Effect.tap(() =>
          cell.journaled
            ? Effect.void
            : Effect.dieMessage(
                `effect-saga: the handler of tool ${call.name} did not run as a saga step: ` +
                  "build the toolkit's handlers with Agent.make(toolkit).toLayer(...)"
              )
        ),
        Effect.map(({ encodedResult, isFailure, result }) =>
          Response.makePart("tool-result", {
            id: call.id,
            name: call.name,
            result,
            encodedResult,
            isFailure,
            providerExecuted: false,
            ...(call.providerName === undefined ? {} : { providerName: call.providerName })
          })
        )
      )
    },
    { concurrency }
  )

/** What the model is told in place of a handler's result: that the call awaits approval, or did not run. */
interface AnsweredInstead {
  readonly encodedResult: unknown
  readonly isFailure: boolean
  readonly result: unknown
}

/**
 * The answer to a call that awaits approval: the model is told so (it is not a failure), and the
 * conversation's `Agent.loop`, if any, learns which step to settle.
 */
const awaitingApprovalOf = (call: Response.ToolCallPartEncoded, pending: ApprovalPending) =>
  Effect.map(FiberRef.get(pendingCalls), (collected) => {
    collected?.push({ callId: call.id, toolName: call.name, stepId: pending.stepId })
    return { encodedResult: awaitingApproval, isFailure: false, result: awaitingApproval }
  })

/**
 * The answer to a call the saga refused to run (it was bound to compensate): the model is told so,
 * and why, as a failed result. Nothing is left to settle.
 */
const notRunOf = (refused: ApprovalRefused) => {
  const told = notRun(refused)
  return { encodedResult: told, isFailure: true, result: told }
}

/** The text of an answer, decoded as `generateObject`'s schema says. */
const objectOf = (content: ReadonlyArray<Response.AllParts<any>>, schema: Schema.Schema<any, any, any>) => {
  const text = content.flatMap((part) => (part.type === "text" ? [part.text] : []))
  if (text.length === 0) {
    return Effect.fail(
      new AiError.MalformedOutput({
        module: MODULE,
        method: "generateObject",
        description: "No object was generated by the large language model"
      })
    )
  }
  return Effect.mapError(
    Schema.decode(Schema.parseJson(schema))(text.join("")),
    (cause) =>
      new AiError.MalformedOutput({
        module: MODULE,
        method: "generateObject",
        description: "Generated object failed to conform to provided schema",
        cause
      })
  )
}

/**
 * One turn as a saga step: asked of `inner` (with tool-call resolution off) and journaled, or read
 * back from the journal; then its tool calls are resolved, each a step of its own.
 */
const journaledTurn = (
  saga: Saga,
  inner: LanguageModel.Service,
  modelOptions: ModelOptions,
  method: Method,
  options: any
) =>
  Effect.gen(function* () {
    const toolkit = yield* resolveToolkit(options.toolkit)
    const prompt = Prompt.make(options.prompt)
    const schema =
      method === "streamText"
        ? Schema.Array(Response.StreamPart(toolkit ?? Toolkit.empty))
        : Schema.Array(Response.Part(toolkit ?? Toolkit.empty))
    const request = { ...options, prompt, toolkit, disableToolCallResolution: true }
    const ask = withModelCallSpanMasked(
      (method === "streamText"
        ? Effect.map(Stream.runCollect(inner.streamText(request)), Chunk.toArray)
        : Effect.map(
            method === "generateObject" ? inner.generateObject(request) : inner.generateText(request),
            (response) => response.content
          )) as unknown as Effect.Effect<ReadonlyArray<unknown>, AiError.AiError>
    )
    const replay = replayedAnswer(schema as Schema.Schema<any, any>, toolkit?.tools ?? {})
    // The cap is the step's own (`maxPayloadBytes`, or the default every tool has).
    const spec: StepSpec = turnSpec(
      modelOptions,
      () =>
        ask.pipe(
          Effect.flatMap((content) =>
            Effect.mapError(Schema.encode(schema as Schema.Schema<any, any>)(content), malformed(method, "encode"))
          ),
          Effect.flatMap(journalable(method, spec.maxPayloadBytes))
        ),
      replay.unfollowable
    )
    const description = yield* describeTurn(saga, method, prompt, toolkit, options)
    const answer = (yield* Effect.mapError(
      saga.step(spec, description, undefined),
      asAiError(method)
    )) as ReadonlyArray<any>
    const content =
      replay.decoded ??
      (yield* Effect.mapError(
        Schema.decodeUnknown(schema as Schema.Schema<any, any>)(answer),
        malformed(method, "the journaled answer does not decode with this toolkit's schemas")
      ))
    const results =
      toolkit === undefined || options.disableToolCallResolution === true
        ? []
        : yield* resolveToolCalls(answer, toolkit, options.concurrency)
    return [...content, ...results] as Array<any>
  })

/**
 * `inner` with every call made inside a saga journaled as a step (see `journaledTurn`). Outside a
 * saga, calls go to `inner` unchanged.
 */
export const journaled = (inner: LanguageModel.Service, modelOptions: ModelOptions = {}): LanguageModel.Service => {
  const inSaga = <A, E, R>(outside: Effect.Effect<A, E, R>, inside: (saga: Saga) => Effect.Effect<A, any, any>) =>
    Effect.flatMap(Effect.serviceOption(CurrentSaga), (saga) =>
      Option.isNone(saga) ? outside : inside(saga.value)
    ) as Effect.Effect<A, E, R>
  const service = {
    generateText: (options: any) =>
      inSaga(inner.generateText(options), (saga) =>
        Effect.map(
          journaledTurn(saga, inner, modelOptions, "generateText", options),
          (content) => new GenerateTextResponse(content)
        )
      ),
    generateObject: (options: any) =>
      inSaga(inner.generateObject(options), (saga) =>
        Effect.flatMap(journaledTurn(saga, inner, modelOptions, "generateObject", options), (content) =>
          Effect.map(objectOf(content, options.schema), (value) => new GenerateObjectResponse(value, content))
        )
      ),
    streamText: (options: any) =>
      Stream.unwrap(
        inSaga(Effect.succeed(inner.streamText(options)), (saga) =>
          Effect.map(journaledTurn(saga, inner, modelOptions, "streamText", options), Stream.fromIterable)
        )
      )
  }
  return service as unknown as LanguageModel.Service
}
