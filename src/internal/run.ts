import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import type { Approval, ApprovalRequest } from "../Approval.js"
import type { Unauthorized } from "../Authority.js"
import { DeclarationError, InvalidInput, PayloadTooLarge } from "../Compensable.js"
import type { AppendError, Draft, Phase } from "../Journal.js"
import { JournalCorrupted } from "../Journal.js"
import * as Outcome from "../Outcome.js"
import { ApprovalRefused, NonDeterminism } from "../SagaError.js"
import type { UnknownStep } from "../SagaResult.js"
import { nowIso } from "./clock.js"
import { byteLength, decodeJson, encodeJson, parsePayload } from "./codec.js"
import { CurrentSaga } from "./context.js"
import { problemOf } from "./declaration.js"
import type { Expiring } from "./expiry.js"
import { expiredAt } from "./expiry.js"
import { Faults } from "./faults.js"
import { sha256 } from "./hash.js"
import type { Registry } from "./registry.js"
import type { StepContext, StepSpec } from "./spec.js"
import type { StepView } from "./view.js"
import { isUnknown } from "./view.js"
import type { Writer } from "./writer.js"

/** Why a run stopped before its program ended. */
export type Halt =
  | { readonly _tag: "AwaitingApproval"; readonly request: ApprovalRequest }
  | { readonly _tag: "NeedsAttention"; readonly step: UnknownStep }
  | { readonly _tag: "Refused"; readonly error: ApprovalRefused }
  | { readonly _tag: "Closed" }
  | { readonly _tag: "Unauthorized"; readonly error: Unauthorized }
  | {
      readonly _tag: "Fatal"
      readonly error: AppendError | JournalCorrupted | NonDeterminism
    }

/** Carries a halt out of the step that decided it. */
class HaltSignal {
  readonly _tag = "HaltSignal"
  constructor(readonly halt: Halt) {}
}

const haltOn = (halt: Halt) => Effect.fail(new HaltSignal(halt))

const fatal = (error: AppendError | JournalCorrupted | NonDeterminism) => haltOn({ _tag: "Fatal", error })

/** The idempotency key of a step's forward call. */
export const forwardKey = (sagaId: string, stepId: string): string => `${sagaId}/${stepId}`

/** One run of one saga's program: the `CurrentSaga` its steps call. */
export class SagaRun {
  /** Why the run halted, once a step decided it. */
  haltedWith: Halt | undefined
  private inflight = 0
  private programFiber: Fiber.RuntimeFiber<unknown, unknown> | undefined
  private readonly occurrences = new Map<string, number>()
  /** The tools this run called, with the context their undos run in. */
  readonly tools: Registry = new Map()
  /** Journaled steps this run has not called yet. */
  private readonly unreplayed: Map<string, StepView>

  constructor(
    readonly writer: Writer,
    private readonly approval: Approval["Type"],
    private readonly registry: Registry,
    private readonly closed: boolean,
    /** Asks again, before each step progresses, whether the caller may go on. */
    private readonly recheck: Effect.Effect<void, Unauthorized>,
    /** How long an approval lasts when neither it nor its tool says (the `Saga` layer's default). */
    private readonly approvalTtl?: Duration.Duration | undefined
  ) {
    this.unreplayed = new Map(writer.view.steps)
  }

  get sagaId(): string {
    return this.writer.sagaId
  }

  /**
   * Runs the program in a fiber of its own, which a halt interrupts once no step is between its
   * first and last journal write.
   */
  runProgram<A, E, R>(program: Effect.Effect<A, E, R>): Effect.Effect<Exit.Exit<A, E>, never, Exclude<R, CurrentSaga>> {
    const own = Effect.withFiberRuntime<A, E, R>((fiber) => {
      this.programFiber = fiber as Fiber.RuntimeFiber<unknown, unknown>
      return program
    })
    return Effect.flatMap(Effect.fork(Effect.provideService(own, CurrentSaga, this)), (fiber) =>
      Effect.onInterrupt(Fiber.await(fiber), () => Fiber.interrupt(fiber))
    )
  }

  private interruptIfDrained(): void {
    if (this.haltedWith !== undefined && this.inflight === 0) this.programFiber?.unsafeInterruptAsFork(FiberId.none)
  }

  private readonly leave = Effect.sync(() => {
    this.inflight--
    this.interruptIfDrained()
  })

  readonly step = (spec: StepSpec, input: unknown, key: string | undefined): Effect.Effect<any, any, any> =>
    Effect.suspend(() => {
      if (this.haltedWith !== undefined) return Effect.never
      const encoded = encodeJson(spec.input, input)
      if (Either.isLeft(encoded)) return Effect.fail(new InvalidInput({ toolName: spec.name, reason: encoded.left }))
      const inputJson = encoded.right
      const bytes = byteLength(inputJson)
      if (bytes > spec.maxPayloadBytes) {
        return Effect.fail(new PayloadTooLarge({ toolName: spec.name, bytes, maxBytes: spec.maxPayloadBytes }))
      }
      const digest = sha256(inputJson)
      const stepId = this.allocate(spec.name, key ?? digest.slice(0, 16))
      return Effect.flatMap(Effect.context<never>(), (context) => {
        if (!this.tools.has(spec.name)) {
          const problem = problemOf(spec)
          if (problem !== undefined) return Effect.die(new DeclarationError({ toolName: spec.name, reason: problem }))
          const tool = { spec, context: Context.omit(CurrentSaga)(context) as Context.Context<never> }
          this.tools.set(spec.name, tool)
          if (!this.registry.has(spec.name)) this.registry.set(spec.name, tool)
        }
        this.inflight++
        const advance = Effect.zipRight(
          Effect.catchAll(this.recheck, (error) => haltOn({ _tag: "Unauthorized", error })),
          this.advance(spec, stepId, input, inputJson, digest, key !== undefined)
        )
        return Effect.ensuring(advance, this.leave)
      }).pipe(
        Effect.catchIf(
          (error): error is HaltSignal => error instanceof HaltSignal,
          (signal) => this.stop(signal.halt)
        ),
        Effect.withSpan("effect-saga.step", {
          attributes: { "saga.id": this.sagaId, "step.id": stepId, tool: spec.name },
          captureStackTrace: false
        })
      )
    })

  /** Halts the run (the first halt wins) and blocks this fiber until the program is interrupted. */
  private stop(halt: Halt): Effect.Effect<never> {
    this.haltedWith ??= halt
    this.interruptIfDrained()
    return Effect.never
  }

  private allocate(toolName: string, base: string): string {
    const id = `${toolName}:${base}`
    const occurrence = (this.occurrences.get(id) ?? 0) + 1
    this.occurrences.set(id, occurrence)
    const stepId = `${id}#${occurrence}`
    this.unreplayed.delete(stepId)
    return stepId
  }

  private advance(spec: StepSpec, stepId: string, input: unknown, inputJson: string, digest: string, keyed: boolean) {
    const journaled = this.writer.view.steps.get(stepId)
    if (journaled === undefined) return this.fresh(spec, stepId, input, inputJson, digest, keyed)
    if (journaled.toolName !== spec.name) {
      return fatal(
        this.divergence(stepId, `the journal has tool ${journaled.toolName} here, the program called ${spec.name}`)
      )
    }
    if (journaled.input !== inputJson) {
      if (journaled.awaiting !== undefined && journaled.intents === 0) {
        return this.refuse(journaled, "the input differs from the one that awaits approval")
      }
      return fatal(this.divergence(stepId, "the input differs from the journaled input"))
    }
    if (journaled.executed !== undefined) return this.replayResult(spec, journaled)
    if (journaled.failed !== undefined) return this.replayFailure(spec, journaled)
    if (this.closed) return this.refuseToRun(stepId)
    if (isUnknown(journaled)) {
      if (spec.retryMode !== "idempotency-key") {
        return haltOn({
          _tag: "NeedsAttention",
          step: {
            stepId,
            toolName: spec.name,
            reason: "INTENT was journaled but no outcome: it may or may not have run"
          }
        })
      }
      return this.execute(spec, stepId, input, inputJson, journaled.intents + 1)
    }
    return this.gate(spec, stepId, input, inputJson, digest, journaled)
  }

  /** A step the journal has never seen. */
  private fresh(spec: StepSpec, stepId: string, input: unknown, inputJson: string, digest: string, keyed: boolean) {
    if (!keyed && this.unreplayed.size > 0) {
      const pending = this.unreplayedOf(spec.name)
      if (pending !== undefined) {
        if (pending.awaiting !== undefined && pending.intents === 0) {
          return this.refuse(pending, "resumed with a different input than the one that awaits approval")
        }
        return fatal(
          this.divergence(stepId, `the journal's call of ${spec.name} at ${pending.stepId} was not replayed first`)
        )
      }
    }
    if (this.closed) return this.refuseToRun(stepId)
    return this.gate(spec, stepId, input, inputJson, digest, undefined)
  }

  /** Once a saga completed or began to compensate, no step runs forward again. */
  private refuseToRun(stepId: string) {
    return this.writer.view.status === "completed"
      ? fatal(this.divergence(stepId, "the saga completed without running this step"))
      : haltOn({ _tag: "Closed" })
  }

  /** A journaled, unkeyed call of `toolName` that this replay has not reached. */
  private unreplayedOf(toolName: string): StepView | undefined {
    for (const step of this.unreplayed.values()) {
      if (
        step.toolName === toolName &&
        step.stepId.startsWith(`${toolName}:${sha256(step.input ?? "null").slice(0, 16)}#`)
      ) {
        return step
      }
    }
    return undefined
  }

  private divergence(stepId: string, reason: string) {
    return new NonDeterminism({ sagaId: this.sagaId, stepId, reason })
  }

  private replayResult(spec: StepSpec, step: StepView) {
    const payload = parsePayload(step.executed!.payload)
    const decoded = decodeJson(spec.success, JSON.stringify(payload?.result ?? null))
    if (Either.isLeft(decoded)) {
      return fatal(
        new JournalCorrupted({
          sagaId: this.sagaId,
          seq: step.executed!.seq,
          reason: `result of ${step.stepId} does not decode with the tool's schema: ${decoded.left}`
        })
      )
    }
    return Effect.succeed(decoded.right)
  }

  private replayFailure(spec: StepSpec, step: StepView) {
    const payload = parsePayload(step.failed!.payload)
    const description = typeof payload?.description === "string" ? payload.description : "failed"
    if (payload?.defect === true) return Effect.die(new Error(description))
    const schema = spec.failure === undefined ? Outcome.Failed : Schema.Union(spec.failure, Outcome.Failed)
    const decoded = decodeJson(schema, JSON.stringify(payload?.error ?? null))
    return Effect.fail(Either.isRight(decoded) ? decoded.right : Outcome.failed(description))
  }

  /** Irreversible steps wait for an approval that names exactly this input; others pass. */
  private gate(
    spec: StepSpec,
    stepId: string,
    input: unknown,
    inputJson: string,
    digest: string,
    journaled: StepView | undefined
  ) {
    if (spec.reversibility !== "irreversible") return this.execute(spec, stepId, input, inputJson, 1)
    return Effect.gen(this, function* () {
      if (journaled?.refused !== undefined) {
        const reason = parsePayload(journaled.refused.payload)?.reason
        return yield* haltOn({
          _tag: "Refused",
          error: new ApprovalRefused({
            stepId,
            toolName: spec.name,
            reason: typeof reason === "string" ? reason : "refused"
          })
        })
      }
      if (journaled?.approved === undefined) {
        const request: ApprovalRequest = {
          requestId: `${this.sagaId}/${stepId}`,
          sagaId: this.sagaId,
          stepId,
          toolName: spec.name,
          input: inputJson,
          inputDigest: digest,
          requestedAt: journaled?.awaiting?.at ?? (yield* nowIso)
        }
        if (journaled?.awaiting === undefined) {
          yield* this.write(stepId, spec.name, "AWAITING_APPROVAL", inputJson, { inputDigest: digest })
        }
        const decision = yield* Effect.catchAll(this.approval.request(request), fatal)
        if (decision._tag === "Pending") return yield* haltOn({ _tag: "AwaitingApproval", request })
        const step = this.writer.view.steps.get(stepId)!
        if (decision._tag === "Rejected") {
          return yield* this.refuse(step, `rejected by ${decision.by}: ${decision.reason}`, decision)
        }
        yield* this.verify(spec, step, decision, digest)
        yield* this.write(stepId, spec.name, "APPROVED", null, decision)
      } else {
        yield* this.verify(spec, journaled, parsePayload(journaled.approved.payload) ?? {}, digest)
      }
      return yield* this.execute(spec, stepId, input, inputJson, 1)
    })
  }

  /**
   * Refuses an approval that names another input digest than `digest`, then one that has expired
   * (its own `expiresAt`, else its time plus the tool's or the layer's `approvalTtl`).
   */
  private verify(
    spec: StepSpec,
    step: StepView,
    approval: Expiring & { readonly inputDigest?: unknown },
    digest: string
  ) {
    if (approval.inputDigest !== digest) return this.refuse(step, "the approval names a different input")
    return Effect.flatMap(expiredAt(approval, spec.approvalTtl ?? this.approvalTtl), (expiry) =>
      expiry === undefined
        ? Effect.void
        : this.refuse(step, `the approval expired at ${expiry.text}`, undefined, "EXPIRED")
    )
  }

  /** Journals the refusal of an irreversible step and halts the run so that it compensates. */
  private refuse(step: StepView, reason: string, decision?: object, phase: Phase = "REJECTED") {
    return Effect.zipRight(
      this.write(step.stepId, step.toolName, phase, null, { ...decision, reason }),
      haltOn({ _tag: "Refused", error: new ApprovalRefused({ stepId: step.stepId, toolName: step.toolName, reason }) })
    )
  }

  private write(stepId: string, toolName: string, phase: Phase, input: string | null, payload: object | null) {
    const draft: Draft = { stepId, toolName, phase, input, payload: payload === null ? null : JSON.stringify(payload) }
    return Effect.catchAll(this.writer.append([draft]), fatal)
  }

  /** Journals `INTENT`, runs the tool (retrying as it declares), journals its outcome. */
  private execute(spec: StepSpec, stepId: string, input: unknown, inputJson: string, firstAttempt: number) {
    const idempotencyKey = forwardKey(this.sagaId, stepId)
    const state = { attempt: firstAttempt - 1, receipt: undefined as string | undefined }
    const nextContext = (): StepContext => ({
      sagaId: this.sagaId,
      stepId,
      toolName: spec.name,
      idempotencyKey,
      attempt: ++state.attempt,
      setReceipt: (value) =>
        Effect.sync(() => {
          state.receipt = Redacted.isRedacted(value) ? Redacted.value(value) : value
        })
    })
    return this.write(stepId, spec.name, "INTENT", inputJson, { idempotencyKey, attempt: firstAttempt }).pipe(
      Effect.zipRight(Effect.exit(this.call(spec, input, nextContext))),
      Effect.flatMap((exit) =>
        Exit.isSuccess(exit)
          ? this.executed(spec, stepId, exit.value, state.receipt)
          : this.failed(spec, stepId, exit.cause)
      )
    )
  }

  /** Journals `EXECUTED` with the encoded result and the receipt, if the result can be journaled. */
  private executed(spec: StepSpec, stepId: string, value: unknown, receipt: string | undefined) {
    const result = encodeJson(spec.success, value)
    const tooLarge = Either.isRight(result) && byteLength(result.right) > spec.maxPayloadBytes
    if (Either.isLeft(result) || tooLarge) {
      const why = Either.isLeft(result)
        ? `its result does not encode: ${result.left}`
        : "its result exceeds maxPayloadBytes"
      return haltOn({
        _tag: "NeedsAttention",
        step: { stepId, toolName: spec.name, reason: `the tool ran but ${why}, so it cannot be journaled` }
      })
    }
    const payload = `{"result":${result.right}${receipt === undefined ? "" : `,"receipt":${JSON.stringify(receipt)}`}${
      spec.changesNothing === true ? `,"changesNothing":true` : ""
    }}`
    return this.writer
      .append([{ stepId, toolName: spec.name, phase: "EXECUTED", input: null, payload }])
      .pipe(
        Effect.catchAll(fatal),
        Effect.zipRight(Effect.annotateCurrentSpan("outcome", "executed")),
        Effect.as(value)
      )
  }

  private call(spec: StepSpec, input: unknown, nextContext: () => StepContext) {
    const attempt = Effect.suspend(() => spec.execute(input, nextContext()) as Effect.Effect<unknown, unknown>)
    let call: Effect.Effect<unknown, unknown> = Effect.flatMap(Effect.serviceOption(Faults), (faults) =>
      Option.isSome(faults) ? faults.value.around(spec.name, "execute", attempt) : attempt
    )
    if (spec.timeout !== undefined) {
      const timeout = spec.timeout
      call = Effect.timeoutFail(call, {
        duration: timeout,
        onTimeout: () => Outcome.unknown("the call started but timed out before it answered")
      })
    }
    if (spec.retry !== undefined) {
      const idempotent = spec.retryMode === "idempotency-key"
      call = Effect.retry(call, {
        schedule: spec.retry as Schedule.Schedule<unknown, unknown>,
        while: (error) => !(error instanceof Outcome.Partial) && (idempotent || !(error instanceof Outcome.Unknown))
      })
    }
    return call
  }

  /** Journals how a call that did not succeed ended, and answers the program accordingly. */
  private failed(spec: StepSpec, stepId: string, cause: Cause.Cause<unknown>) {
    if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause)
    const failure = Cause.failureOption(cause)
    if (
      Option.isSome(failure) &&
      (failure.value instanceof Outcome.Unknown || failure.value instanceof Outcome.Partial)
    ) {
      return haltOn({ _tag: "NeedsAttention", step: { stepId, toolName: spec.name, reason: failure.value.message } })
    }
    const error = Option.getOrUndefined(failure)
    const encoded = Option.isSome(failure) ? this.encodeFailure(spec, failure.value) : undefined
    const description =
      error instanceof Error ? error.message : error !== undefined ? String(error) : Cause.pretty(cause).split("\n")[0]!
    const payload = {
      description,
      defect: Option.isNone(failure),
      ...(spec.taintsOnFailure === false ? { taints: false } : {}),
      ...(encoded === undefined ? {} : { error: encoded })
    }
    return Effect.zipRight(
      this.write(stepId, spec.name, "FAILED", null, payload).pipe(
        Effect.tap(() => Effect.annotateCurrentSpan("outcome", "failed"))
      ),
      Effect.failCause(cause)
    )
  }

  private encodeFailure(spec: StepSpec, error: unknown): unknown {
    const schema = error instanceof Outcome.Failed || spec.failure === undefined ? Outcome.Failed : spec.failure
    const encoded = encodeJson(schema, error)
    return Either.isRight(encoded) ? JSON.parse(encoded.right) : undefined
  }
}
