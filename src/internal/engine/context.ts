import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as FiberRef from "effect/FiberRef"
import type { StepSpec } from "./spec.js"

/** How one call of a step runs. */
export interface StepOptions {
  /**
   * An irreversible step whose approval is pending fails with `ApprovalPending` instead of halting
   * the saga: the program goes on, and the call runs when it is settled (see `settle`).
   */
  readonly deferApproval?: boolean | undefined
  /**
   * Told the exit the step's span ended with when the step failed (its receipts masked, a replayed
   * failure a success): a span around the step ends the same way.
   */
  readonly spanEnded?: ((exit: Exit.Exit<unknown, unknown>) => void) | undefined
}

/**
 * The saga a program runs in: `Saga.run` provides it, and a tool called outside a saga does not
 * type-check. It serves the run's program only: a tool called through it from a fiber that
 * outlived the program (`Effect.forkDaemon`) dies with a defect, and runs and journals nothing.
 * A program reads its saga's id (`Saga.currentSagaId`); its other members are the engine's.
 *
 * Public as `Saga.CurrentSaga` (re-exported as itself, so that declaration files can name it).
 *
 * @since 0.1.0
 * @category context
 */
export class CurrentSaga extends Context.Tag("effect-saga/CurrentSaga")<
  CurrentSaga,
  {
    /** The id of the saga the program runs as (`Saga.currentSagaId` reads it). */
    readonly sagaId: string
    /**
     * Runs `spec` as the saga's next journaled step (what calling a tool does).
     *
     * @internal the engine's: call a tool instead
     */
    readonly step: (
      spec: StepSpec,
      input: unknown,
      key: string | undefined,
      options?: StepOptions
    ) => Effect.Effect<unknown, unknown>
    /**
     * `step`, for a caller that runs on `fiber` and has read it already (`callStep`).
     *
     * @internal the engine's: call a tool instead
     */
    readonly stepOn: (
      fiber: Fiber.RuntimeFiber<unknown, unknown>,
      spec: StepSpec,
      input: unknown,
      key: string | undefined,
      options?: StepOptions
    ) => Effect.Effect<unknown, unknown>
    /**
     * Runs a call that answered `ApprovalPending` once it is approved, and answers with its result;
     * halts the saga (`AwaitingApproval`) while it is not. A replay answers from the journal.
     *
     * @internal the engine's: the agents settle their deferred calls with it
     */
    readonly settle: (stepId: string) => Effect.Effect<unknown, unknown>
    /**
     * Says the program serves nothing again (a resumed MCP session, whose client is gone): the
     * journal's calls it does not replay are no divergence, and it completes without them.
     *
     * @internal the engine's: the MCP session marks its resumes with it
     */
    readonly servesNothingAgain: () => Effect.Effect<void>
  }
>() {}

/**
 * Calls a step of the caller's saga: the saga found in the fiber's context as the step reads the
 * fiber anyway (one read, no lookup of its own). Without a saga it dies as a missing service does.
 */
export const callStep = (
  spec: StepSpec,
  input: unknown,
  key: string | undefined,
  options?: StepOptions
): Effect.Effect<any, any, CurrentSaga> =>
  Effect.withFiberRuntime((fiber) =>
    Context.unsafeGet(fiber.currentContext, CurrentSaga).stepOn(
      fiber as Fiber.RuntimeFiber<unknown, unknown>,
      spec,
      input,
      key,
      options
    )
  )

/**
 * Set where a run is known to resume a saga that exists (recovery's): it reads the saga first, even
 * on a store that starts new sagas unread (journal/unreadStart.ts).
 */
export const readFirst: FiberRef.FiberRef<boolean> = FiberRef.unsafeMake(false)

/**
 * Set while an undo runs, to the name of the tool whose undo it is: starting a saga from inside one
 * is refused (the inverse is bounded), naming that tool.
 */
export const insideUndo: FiberRef.FiberRef<string | undefined> = FiberRef.unsafeMake<string | undefined>(undefined)

/**
 * Set (`Saga.withInterruptibleUndos`) where interrupting an operator's command is to interrupt the
 * undo it runs: the CLI's, on SIGINT or SIGTERM. Unset, an undo runs to its end whatever the caller.
 */
export const undosStopWithCaller: FiberRef.FiberRef<boolean> = FiberRef.unsafeMake(false)

/** A run a fiber belongs to: its saga's id, and whether the run is still in progress. */
export class EnclosingRun {
  inProgress = true
  constructor(readonly sagaId: string) {}
}

/**
 * The runs the fiber belongs to, outermost first: set in each run's program fiber, and inherited by
 * what it forks. A run or an operator's command of one of their sagas from there, while that run is
 * in progress, would wait for it to end, which waits for it: it is refused at once. A fiber that
 * outlived the run (`Effect.forkDaemon`) may run the saga again once the run has ended.
 */
export const enclosingRuns: FiberRef.FiberRef<ReadonlyArray<EnclosingRun>> = FiberRef.unsafeMake<
  ReadonlyArray<EnclosingRun>
>([])

const NONE: ReadonlyArray<string> = []

/** The sagas whose runs `fiber` belongs to and that are still in progress: whose locks they hold. */
export const heldBy = (fiber: Fiber.RuntimeFiber<any, any>): ReadonlyArray<string> => {
  const runs = fiber.getFiberRef(enclosingRuns)
  return runs.length === 0 ? NONE : runs.flatMap((run) => (run.inProgress ? [run.sagaId] : []))
}

/** Whether `fiber` belongs to a run of `sagaId` still in progress (its program, what that calls, forks or runs). */
export const insideRunOf = (fiber: Fiber.RuntimeFiber<any, any>, sagaId: string): boolean =>
  fiber.getFiberRef(enclosingRuns).some((run) => run.inProgress && run.sagaId === sagaId)
