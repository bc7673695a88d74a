/**
 * One simulated process death: a switch armed at a crash point, and the store and tool calls seen
 * through it. Once the point is reached the "process" is dead: every later write to the journal or
 * the approvals is refused (the interrupt a killed process never sees the end of), and no tool or
 * undo starts. What was written before the point stays, as it would in a real store.
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import type { Approval } from "../../Approval.js"
import type { Entry, Journal } from "../../Journal.js"
import * as Outcome from "../../Outcome.js"
import type { FaultSite, FaultStep } from "../engine/faults.js"
import { Faults } from "../engine/faults.js"
import type { StepSpec } from "../engine/spec.js"

/** Where a process dies: right after its `write`-th journal write, or right after its `call`-th tool call ended. */
export type Point =
  | { readonly _tag: "AfterWrite"; readonly write: number }
  | { readonly _tag: "BeforeOutcome"; readonly call: number }

/** What one tool call was: which step, forward call or undo. */
export interface CallSeen {
  readonly toolName: string
  readonly site: FaultSite
  readonly stepId: string
}

/**
 * The switch of one process: armed at a crash point (or at none, for the process that recovers). It
 * counts the journal writes and tool calls the process makes, and kills it at the point.
 */
export class CrashSwitch {
  writes = 0
  calls = 0
  crashed = false
  /** The last seq this process wrote: where the journal stops when it dies. */
  lastSeq = 0
  /** What each write wrote and what each call was, in order: how points are described. */
  readonly written: Array<ReadonlyArray<Entry>> = []
  readonly seen: Array<CallSeen> = []

  private constructor(
    readonly point: Point | undefined,
    /** Completed when the process dies. */
    readonly killed: Deferred.Deferred<void>
  ) {}

  static make = (point: Point | undefined): Effect.Effect<CrashSwitch> =>
    Effect.map(Deferred.make<void>(), (killed) => new CrashSwitch(point, killed))

  /** Marks the process dead and tells whoever waits for its death. */
  private readonly kill = Effect.suspend(() => {
    this.crashed = true
    return Deferred.succeed(this.killed, undefined)
  })

  private die() {
    return Effect.zipRight(this.kill, Effect.interrupt)
  }

  /** A write or call that a dead process would never have made. */
  refuse<A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> {
    return Effect.suspend(() => (this.crashed ? Effect.interrupt : effect))
  }

  /** An append, counted; the process dies right after the one the point names. */
  append<E>(write: Effect.Effect<ReadonlyArray<Entry>, E>): Effect.Effect<ReadonlyArray<Entry>, E> {
    return this.refuse(
      Effect.flatMap(write, (entries) => {
        this.writes++
        // A copy: the memory journal keeps appending to the array of a saga's first append.
        this.written.push(entries.slice())
        this.lastSeq = entries.at(-1)?.seq ?? this.lastSeq
        const point = this.point
        return point?._tag === "AfterWrite" && point.write === this.writes ? this.die() : Effect.succeed(entries)
      })
    )
  }

  /** A tool call, counted; the process dies right after the one the point names ends. */
  call<A, E, R>(seen: CallSeen, run: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> {
    return this.refuse(
      Effect.suspend(() => {
        const index = ++this.calls
        this.seen.push(seen)
        const point = this.point
        if (point?._tag !== "BeforeOutcome" || point.call !== index) return run
        // However the call ends: with an answer, a failure, or cut by its tool's timeout.
        return Effect.zipRight(Effect.exit(Effect.ensuring(run, this.kill)), Effect.interrupt)
      })
    )
  }
}

/** The store as the process behind `crash` sees it. */
export const storeThrough = (
  crash: CrashSwitch,
  journal: Journal["Type"],
  approval: Approval["Type"]
): { readonly journal: Journal["Type"]; readonly approval: Approval["Type"] } => ({
  journal: {
    ...journal,
    append: (...args) => crash.append(journal.append(...args)),
    claim: (...args) => crash.refuse(journal.claim(...args)),
    claimLapsed: (...args) => crash.refuse(journal.claimLapsed(...args)),
    renew: (...args) => crash.refuse(journal.renew(...args)),
    release: (...args) => crash.refuse(journal.release(...args)),
    importSaga: (...args) => crash.refuse(journal.importSaga(...args)),
    prune: (...args) => crash.refuse(journal.prune(...args))
  },
  approval: {
    ...approval,
    request: (...args) => crash.refuse(approval.request(...args)),
    approve: (...args) => crash.refuse(approval.approve(...args)),
    reject: (...args) => crash.refuse(approval.reject(...args)),
    renew: (...args) => crash.refuse(approval.renew(...args))
  }
})

/** How often one step's tool ran, forward and back, over every process of one crash point. */
export interface StepCalls {
  readonly stepId: string
  readonly toolName: string
  readonly spec: StepSpec
  /** Forward calls that ran, however they ended. */
  forward: number
  /** Forward calls that may have applied (all but those that failed: a failure is proved not applied). */
  mayHaveApplied: number
  undos: number
  /** The last result a forward call returned: what an operator who asks the provider would learn. */
  returned: Option.Option<unknown>
}

/** A forward call that failed proved it did not apply; any other end (a result, unknown, a defect, a cut) may have. */
const mayHaveApplied = (exit: Exit.Exit<unknown, unknown>): boolean => {
  if (Exit.isSuccess(exit)) return true
  const failure = Cause.failureOption(exit.cause)
  return Option.isNone(failure) || failure.value instanceof Outcome.Unknown || failure.value instanceof Outcome.Partial
}

/** Every tool call of one crash point, by step. */
export class Ledger {
  readonly steps = new Map<string, StepCalls>()

  private of(step: FaultStep): StepCalls {
    let calls = this.steps.get(step.stepId)
    if (calls === undefined) {
      calls = {
        stepId: step.stepId,
        toolName: step.spec.name,
        spec: step.spec,
        forward: 0,
        mayHaveApplied: 0,
        undos: 0,
        returned: Option.none()
      }
      this.steps.set(step.stepId, calls)
    }
    return calls
  }

  /**
   * The `Faults` a process runs its tools with: counted here, cut by `crash`, and struck by the
   * test's own `Faults` (`Testing.faults` in the world or the services), if it gives one.
   */
  faults(crash: CrashSwitch, own: Option.Option<Faults["Type"]> = Option.none()): Context.Context<Faults> {
    const planned = <A, E, R>(toolName: string, site: FaultSite, call: Effect.Effect<A, E, R>, step: FaultStep) =>
      Option.isSome(own) ? own.value.around(toolName, site, call, step) : call
    return Context.make(
      Faults,
      Faults.of({
        around: (toolName, site, given, step) =>
          crash.call(
            { toolName, site, stepId: step.stepId },
            Effect.suspend(() => {
              const calls = this.of(step)
              if (site === "compensate") {
                calls.undos++
                return planned(toolName, site, given, step)
              }
              calls.forward++
              // What the tool returned, even where the test's own fault answers otherwise (`unknown` runs the call).
              const seen = Effect.tap(given, (value) =>
                Effect.sync(() => {
                  calls.returned = Option.some(value)
                })
              )
              return Effect.onExit(planned(toolName, site, seen, step), (exit) =>
                Effect.sync(() => {
                  if (mayHaveApplied(exit)) calls.mayHaveApplied++
                })
              )
            })
          )
      })
    )
  }
}
