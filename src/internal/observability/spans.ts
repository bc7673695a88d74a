/** How the engine's spans are made and end: what the OpenTelemetry status of a span says about its outcome. */
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as FiberRef from "effect/FiberRef"
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"
import type { StepReport } from "../../CompensationReport.js"

/** Carries an undo's report through its span as a failure, so that the span ends with an error status. */
class UndoNotDone extends Error {
  constructor(
    readonly report: StepReport,
    detail: string | undefined
  ) {
    super(`the undo of ${report.toolName} ended ${report.outcome}${detail === undefined ? "" : `: ${detail}`}`)
    this.name = "UndoNotDone"
  }
}

/**
 * Outcomes that leave the step's effect in place, wholly or in part, or unknown, or an undo that
 * cannot run in this process: the span is an error.
 */
const notDone = (report: StepReport) =>
  report.outcome === "failed" ||
  report.outcome === "partial" ||
  report.outcome === "unknown" ||
  report.outcome === "unavailable"

/**
 * Runs an undo in the `effect-saga.undo` span: its outcome annotated, and an error status when the
 * undo failed, was partial, has an unknown outcome or is unavailable, whose message is the report's
 * detail (or `shownDetail`, where the detail may quote what a span never shows). The caller gets
 * the report either way.
 */
export const withUndoSpan =
  (attributes: Record<string, unknown>, shownDetail?: string) =>
  <E, R>(undo: Effect.Effect<StepReport, E, R>): Effect.Effect<StepReport, E, R> =>
    undo.pipe(
      Effect.tap((report) => Effect.annotateCurrentSpan("outcome", report.outcome)),
      Effect.flatMap((report) =>
        notDone(report) ? Effect.fail(new UndoNotDone(report, shownDetail ?? report.detail)) : Effect.succeed(report)
      ),
      Effect.withSpan("effect-saga.undo", { attributes, captureStackTrace: false }),
      Effect.catchIf(
        (error): error is UndoNotDone => error instanceof UndoNotDone,
        (error) => Effect.succeed(error.report)
      )
    )

/** A span a fiber enters: `into` makes it the parent span, `leave` restores the one it replaced, `end` ends it. */
export interface Entered {
  readonly into: Effect.Effect<void>
  readonly leave: Effect.Effect<void>
  readonly end: (exit: Exit.Exit<unknown, unknown>) => void
}

/**
 * How `fiber` enters `span`: `into` makes it the parent span of everything the fiber runs next,
 * until `leave`; `end` ends it at the fiber's clock (as `Effect.withSpan` does). For a caller that
 * already holds an uninterruptible frame around the span's work (a step does, to count itself in
 * flight): `withSpan` would add its own mask and finalizer, most of what a trivial step costs.
 */
export const entering = (fiber: Fiber.RuntimeFiber<unknown, unknown>, span: Tracer.Span): Entered =>
  new EnteredSpan(
    span,
    fiber.getFiberRef(FiberRef.currentContext),
    fiber.getFiberRef(FiberRef.currentTracerTimingEnabled),
    Context.get(fiber.currentDefaultServices, Clock.Clock)
  )

/**
 * `entering`'s answer. Its Effects are made when asked for: each is asked for once, and what a
 * span's frame holds is kept while its saga is in flight (docs/performance.md, the working set).
 */
class EnteredSpan implements Entered {
  constructor(
    private readonly span: Tracer.Span,
    private readonly outer: Context.Context<never>,
    private readonly timed: boolean,
    private readonly clock: Clock.Clock
  ) {}

  get into(): Effect.Effect<void> {
    return FiberRef.set(FiberRef.currentContext, Context.add(this.outer, Tracer.ParentSpan, this.span))
  }

  get leave(): Effect.Effect<void> {
    return FiberRef.set(FiberRef.currentContext, this.outer)
  }

  end(exit: Exit.Exit<unknown, unknown>): void {
    if (this.span.status._tag !== "Ended") {
      this.span.end(this.timed ? this.clock.unsafeCurrentTimeNanos() : BigInt(0), exit)
    }
  }
}

/** Ends `span` with `exit` at the fiber's clock. */
const endWith = (span: Tracer.Span, exit: Exit.Exit<unknown, unknown>): Effect.Effect<void> =>
  Effect.clockWith((clock) =>
    Effect.flatMap(FiberRef.get(FiberRef.currentTracerTimingEnabled), (timed) =>
      Effect.sync(() => span.end(timed ? clock.unsafeCurrentTimeNanos() : BigInt(0), exit))
    )
  )

/**
 * `effect` in span `name`, as `Effect.withSpan` runs it, but the span ends with `shown(exit)` where
 * `effect` ends with `exit` (what a failure may show in a span: masked, without an input). The
 * caller gets `effect`'s own exit. The span ends once (`Effect.useSpan` would end it again unless
 * its `status` says it ended, which a tracer's span need not update); `captureStackTrace` adds no
 * `code.stacktrace` to it, and its callers turn it off.
 */
export const withSpanShowing =
  (
    name: string,
    options: Tracer.SpanOptions,
    shown: (exit: Exit.Exit<unknown, unknown>) => Exit.Exit<unknown, unknown>
  ) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.uninterruptibleMask((restore) =>
      Effect.flatMap(Effect.makeSpan(name, options), (span) =>
        Effect.onExit(restore(Effect.withParentSpan(effect, span)), (exit) => endWith(span, shown(exit)))
      )
    )

/** `context` without its span: services captured to be provided later, that must not set the parent of spans made then. */
export const withoutSpan = <R>(context: Context.Context<R>): Context.Context<R> =>
  Context.omit(Tracer.ParentSpan)(context) as Context.Context<R>

/**
 * `effect` outside the span it was called in: the spans it makes are roots, not children of the
 * caller's (a background fiber forked from a layer built inside a span of the service's start-up).
 */
export const withoutParentSpan = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.mapInputContext(effect, withoutSpan<R>)

/**
 * A span around one step (an agent's `execute_tool`): the step tells it how its own span ended
 * (`spanEnded`, the step's option), and a failure ends it the same way (the receipts masked, a
 * replayed failure OK); a failure before the step's span (a bad input), with its own exit.
 */
export const spanAroundStep = (name: string, options: Tracer.SpanOptions) => {
  let stepExit: Exit.Exit<unknown, unknown> | undefined
  return {
    spanEnded: (exit: Exit.Exit<unknown, unknown>): void => {
      stepExit = exit
    },
    around: withSpanShowing(name, options, (exit) => (Exit.isFailure(exit) && stepExit !== undefined ? stepExit : exit))
  }
}

/**
 * Runs `use` with a new span named `name`, made as `Effect.makeSpan` makes one (the caller's span
 * its parent unless that one disables propagation, the fiber's span annotations and links, the
 * tracer and clock of the fiber's services) but at once, on the fiber: `Effect.makeSpan` copies all
 * of the fiber's refs to read two of them, and costs three operations more, on every step's path
 * (docs/performance.md, seventeenth pass). With tracing disabled (`Effect.withTracerEnabled`),
 * `Effect.makeSpan` makes it: a span that is never exported.
 */
export const withNewSpan = <A, E, R>(
  name: string,
  attributes: Record<string, unknown>,
  use: (span: Tracer.Span, fiber: Fiber.RuntimeFiber<unknown, unknown>) => Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> =>
  Effect.withFiberRuntime((fiber) => {
    const runtime = fiber as Fiber.RuntimeFiber<unknown, unknown>
    if (runtime.getFiberRef(FiberRef.currentTracerEnabled)) return use(spanOn(runtime, name, attributes), runtime)
    return Effect.flatMap(Effect.makeSpan(name, { attributes, captureStackTrace: false }), (span) =>
      Effect.withFiberRuntime((fiber) => use(span, fiber as Fiber.RuntimeFiber<unknown, unknown>))
    )
  })

const spanOn = (
  fiber: Fiber.RuntimeFiber<unknown, unknown>,
  name: string,
  attributes: Record<string, unknown>
): Tracer.Span => {
  const services = fiber.currentDefaultServices
  const clock = Context.get(services, Clock.Clock)
  const startTime = fiber.getFiberRef(FiberRef.currentTracerTimingEnabled) ? clock.unsafeCurrentTimeNanos() : BigInt(0)
  const parent = propagated(Context.getOption(fiber.getFiberRef(FiberRef.currentContext), Tracer.ParentSpan))
  const links = Chunk.toReadonlyArray(fiber.getFiberRef(FiberRef.currentTracerSpanLinks))
  const options = { attributes, captureStackTrace: false }
  const span = Context.get(services, Tracer.Tracer).span(
    name,
    parent,
    Context.empty(),
    links,
    startTime,
    "internal",
    options
  )
  HashMap.forEach(fiber.getFiberRef(FiberRef.currentTracerSpanAnnotations), (value, key) => span.attribute(key, value))
  for (const key in attributes) span.attribute(key, attributes[key])
  flatten(span.traceId)
  flatten(span.spanId)
  return span
}

/**
 * Makes V8 keep `text` as one flat string, if it was a rope. Effect's own tracer builds a span's ids
 * a character at a time: a trace id is then 20 rope nodes (≈ 680 bytes) and a span id 4 (≈ 150),
 * kept for as long as the span is, which for a run's span is as long as its saga is in flight
 * (docs/performance.md, the working set). Reading a character flattens a rope where it is; the next
 * collection drops its nodes. The text is the same; any other tracer's ids are read, nothing more.
 */
const flatten = (text: string): void => {
  if (text.length > 0) text.charCodeAt(0)
}

/** The nearest of `parent` and its ancestors that does not disable propagation, as `Effect.makeSpan` finds it. */
const propagated = (parent: Option.Option<Tracer.AnySpan>): Option.Option<Tracer.AnySpan> =>
  Option.isSome(parent) && Context.get(parent.value.context, Tracer.DisablePropagation)
    ? parent.value._tag === "Span"
      ? propagated(parent.value.parent)
      : Option.none()
    : parent
