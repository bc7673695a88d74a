/**
 * `Testing.exploreCrashes`: run a saga once to learn its journal writes and tool calls, then, for
 * every one of them, run it afresh in a fresh world, kill the service there, recover it as a
 * restarted service would, and check what the journal, the counts and the world say.
 */

import * as Cause from "effect/Cause"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as TestContext from "effect/TestContext"
import * as Journal from "../../Journal.js"
import * as Recovery from "../../Recovery.js"
import type * as Saga from "../../Saga.js"
import type * as SagaDefinition from "../../SagaDefinition.js"
import type { SagaResult } from "../../SagaResult.js"
import type { ApprovalAnswer, CrashSummary, Ending, ExploreOptions } from "../../Testing.js"
import * as Timeline from "../../Timeline.js"
import { encodeJson } from "../util/codec.js"
import {
  countProblems,
  DETERMINISM_HINT,
  describeError,
  describeExit,
  excused,
  formatReport,
  hiddenUndos,
  replayDiverged
} from "./checks.js"
import { advancing } from "./clock.js"
import type { Point } from "./crash.js"
import { CrashSwitch, Ledger } from "./crash.js"
import type { Resolver } from "./drive.js"
import { DriveProblem, drive, truthfully } from "./drive.js"
import { callersLogging } from "./logging.js"
import { show } from "./options.js"
import { choose, describePoint, divergence, pointsOf } from "./points.js"
import type { Opener, StoreError } from "./process.js"
import { live, liveUntilKilled, openerFor, ServicesFailed, temporaryDirectory } from "./process.js"

/** What `Testing.CrashFound` is made of. */
export class Finding {
  readonly _tag = "Finding"
  constructor(
    readonly point: string,
    readonly approval: ApprovalAnswer,
    readonly approvalAsked: boolean,
    readonly problems: ReadonlyArray<string>,
    readonly timeline: string
  ) {}
}

/** A crash point's result, the calls its tools made, and the switch of the process that was to die. */
interface PointRun {
  readonly result: PointResult
  readonly ledger: Ledger
  readonly crash: CrashSwitch
}

interface PointResult {
  readonly problems: ReadonlyArray<string>
  readonly ending: Ending | undefined
  readonly recovered: boolean
  readonly hidden: number
  readonly timeline: string
}

/**
 * What was asked for that the saga offers nothing of: crashes of a kind it has no point of
 * (`["before-outcome"]` on a saga that calls no tool), approval answers when it asks for no
 * approval, or an input its definition's schema refuses. The exploration would check something
 * else than what was asked.
 */
export class NothingToExplore {
  readonly _tag = "NothingToExplore"
  constructor(readonly reason: string) {}
}

const counted = (n: number, what: string) => `${n} ${what}${n === 1 ? "" : "s"}`

const defaultAllow: ReadonlyArray<Ending> = ["Completed", "Compensated"]

/**
 * What `approvals` given for a run that asks for no approval is: refused (`exploreCrashes`: the
 * exploration would check something else than what was asked), or nothing to answer (a property's
 * generated input that takes a path without an approval).
 */
export type Unasked = "refuse" | "skip"

/** Fails with the `services` layer's own error when it is why a process failed; nothing otherwise. */
const failedServices = <ES>(exit: Exit.Exit<unknown, unknown>): Effect.Effect<void, ES> => {
  if (Exit.isSuccess(exit)) return Effect.void
  const failure = Cause.failureOption(exit.cause)
  return Option.isSome(failure) && failure.value instanceof ServicesFailed
    ? Effect.fail(failure.value.error as ES)
    : Effect.void
}

/** Explores every crash point of the saga on `input`, for each approval answer; fails at the first that breaks a check. */
export const explore = <I, A, E, R, W, EW, S, ES>(
  definition: SagaDefinition.SagaDefinition<I, A, E, R>,
  input: I,
  options: ExploreOptions<W, EW, S, ES>,
  unasked: Unasked = "refuse"
): Effect.Effect<CrashSummary, Finding | NothingToExplore | EW | ES | StoreError> => {
  const sagaId = options.sagaId ?? "explored"
  const allow = options.allow ?? defaultAllow
  const kinds = options.crashes ?? ["after-write", "before-outcome"]
  const answers = options.approvals ?? ["approve"]
  const services = (options.services ?? Layer.empty) as Layer.Layer<any, unknown, any>

  const resolverOf = (ledger: Ledger): Resolver<W> => {
    const resolve = options.resolve ?? "truthfully"
    if (resolve === "truthfully") return truthfully(ledger)
    if (typeof resolve === "function") return resolve
    return () => Effect.succeed(resolve)
  }

  /** Runs the saga at one crash point (none: the uncrashed run), recovers it, and checks it. */
  const runPoint = (
    baseline: CrashSwitch | undefined,
    point: Point | undefined,
    approval: ApprovalAnswer,
    nextStore: () => Effect.Effect<Opener, StoreError, Scope.Scope>,
    onApproval: () => void,
    logging: <X, EX, RX>(run: Effect.Effect<X, EX, RX>) => Effect.Effect<X, EX, RX>
  ): Effect.Effect<PointRun, EW | ES | StoreError> =>
    Effect.gen(function* () {
      const open = yield* nextStore()
      const ledger = new Ledger()
      const world = yield* Layer.build(options.world)
      const operators = { approval, resolve: resolverOf(ledger), ledger }
      const dying = yield* CrashSwitch.make(point)
      const driven = drive(definition, sagaId, input, operators, onApproval) as Effect.Effect<
        SagaResult<unknown, unknown>,
        unknown,
        Saga.Saga | W
      >
      const life = Effect.exit(live(open, dying, ledger, world, services, driven)).pipe(Effect.flatten)
      let exit: Exit.Exit<SagaResult<unknown, unknown>, unknown> = yield* Effect.exit(
        Effect.flatten(advancing(liveUntilKilled(life, dying), () => dying.writes + dying.calls))
      )
      const problems: Array<string> = []
      const diverged = baseline === undefined ? undefined : divergence(baseline, dying)
      if (diverged !== undefined) problems.push(diverged)
      else if (point !== undefined && !dying.crashed) {
        problems.push(
          `the run ended after ${dying.writes} journal writes and ${dying.calls} tool calls without reaching this point: the saga did not repeat what its first run did (is it deterministic?)`
        )
      }
      yield* failedServices<ES>(exit)
      if (dying.crashed) {
        const healthy = yield* CrashSwitch.make(undefined)
        const recovering = Effect.gen(function* () {
          const recovery = yield* Recovery.make({ definitions: [definition] })
          const report = yield* recovery.recoverAll
          for (const saga of report.sagas) {
            if (saga._tag === "Failed") return yield* Effect.fail(new DriveProblem(describeError(saga.error)))
          }
          return yield* driven
        }) as Effect.Effect<SagaResult<unknown, unknown>, unknown, Saga.Saga | Journal.Journal | W>
        exit = yield* Effect.exit(
          advancing(live(open, healthy, ledger, world, services, recovering), () => healthy.writes + healthy.calls)
        )
      }
      yield* failedServices<ES>(exit)
      const result = yield* check(point, exit, open, dying.lastSeq, world, ledger, problems)
      return { result, ledger, crash: dying }
    }).pipe(Effect.scoped, Effect.provide(TestContext.TestContext), logging)

  const check = (
    point: Point | undefined,
    exit: Exit.Exit<SagaResult<unknown, unknown>, unknown>,
    open: Opener,
    lastSeq: number,
    world: Context.Context<W>,
    ledger: Ledger,
    problems: Array<string>
  ): Effect.Effect<PointResult, StoreError> =>
    Effect.gen(function* () {
      const { entries, verification } = yield* Effect.scoped(
        Effect.flatMap(open, (store) =>
          Effect.provide(
            Effect.all({
              entries: Effect.flatMap(Journal.Journal, (journal) => journal.read(sagaId)),
              // A crash before the saga's first write leaves nothing: nothing to break.
              verification: Effect.catchTags(Journal.verify(sagaId), {
                SagaNotFound: () =>
                  Effect.succeed<Journal.Verification>({ _tag: "Intact", entries: 0, digest: Journal.empty.digest }),
                // The options' check refused such an id before anything ran.
                InvalidIdentifier: Effect.die
              })
            }),
            store
          )
        )
      )
      const hidden = point === undefined ? new Set<string>() : hiddenUndos(entries, lastSeq)
      let ending: Ending | undefined
      let excusedUndos = 0
      if (Exit.isFailure(exit)) {
        // A recovery replays the program: one that diverges from its journal reads it differently.
        const hint = point !== undefined && replayDiverged(exit) ? ` ${DETERMINISM_HINT}` : ""
        problems.push(`${point === undefined ? "the run" : "recovery"} failed: ${describeExit(exit)}${hint}`)
      } else {
        const result = exit.value
        ending = result._tag
        // Counted whether `allow` names `CompensationFailed` or the ending is accepted for them alone.
        excusedUndos = excused(result, hidden) ? hidden.size : 0
        if (!allow.includes(result._tag) && excusedUndos === 0) {
          const why = "report" in result ? `\n${formatReport(result)}` : ""
          problems.push(`the saga ended ${result._tag}; expected ${allow.join(" or ")}${why}`)
        }
      }
      if (verification._tag === "Broken") {
        problems.push(`the journal does not verify: broken at seq ${verification.seq}: ${verification.reason}`)
      }
      problems.push(...countProblems(ledger))
      if (ending !== undefined) {
        for (const invariant of options.invariants ?? []) {
          // A throw counts as a failure: not holding, with its reason.
          const holds = yield* Effect.exit(
            Effect.provide(
              Effect.suspend(() => invariant.holds(ending)),
              world
            )
          )
          if (Exit.isFailure(holds))
            problems.push(`invariant "${invariant.name}" could not be checked: ${describeExit(holds)}`)
          else if (typeof holds.value !== "boolean")
            problems.push(`invariant "${invariant.name}" answered ${show(holds.value)}, not true or false`)
          else if (!holds.value)
            problems.push(`invariant "${invariant.name}" does not hold once the saga ended ${ending}`)
        }
      }
      const timeline =
        point === undefined
          ? `journal of the uncrashed run:\n${Timeline.format(entries)}`
          : `journal up to the crash:\n${Timeline.format(entries.filter((e) => e.seq <= lastSeq))}\nwritten by the recovery:\n${Timeline.format(entries.filter((e) => e.seq > lastSeq))}`
      return { problems, ending, recovered: point !== undefined, hidden: excusedUndos, timeline }
    })

  const storeFor = (directory: string) => {
    let index = 0
    return (): Effect.Effect<Opener, StoreError, Scope.Scope> =>
      openerFor(options.store ?? "memory", directory, index++)
  }

  return Effect.gen(function* () {
    const unfit = encodeJson(definition.input, input)
    if (Either.isLeft(unfit)) {
      return yield* Effect.fail(
        new NothingToExplore(
          `the input does not fit definition ${definition.name}: ${unfit.left}: no saga is started with it, so there is nothing to explore`
        )
      )
    }
    const directory = options.store === "sqlite" ? yield* temporaryDirectory : ""
    const nextStore = storeFor(directory)
    // The runs log as the caller does, at the caller's time; they keep their own TestClock.
    const logging = yield* callersLogging
    const summary = { points: 0, found: 0, recoveries: 0, hiddenUndos: 0 }
    const endings: Record<string, number> = {}
    const calls: Record<string, { execute: number; compensate: number }> = {}
    const tally = (run: PointRun) => {
      summary.points++
      if (run.result.recovered) summary.recoveries++
      summary.hiddenUndos += run.result.hidden
      if (run.result.ending !== undefined) endings[run.result.ending] = (endings[run.result.ending] ?? 0) + 1
      for (const step of run.ledger.steps.values()) {
        const counts = calls[step.toolName] ?? { execute: 0, compensate: 0 }
        calls[step.toolName] = {
          execute: counts.execute + step.forward,
          compensate: counts.compensate + step.undos
        }
      }
    }
    const fail = (point: string, approval: ApprovalAnswer, asked: boolean, result: PointResult) =>
      new Finding(point, approval, asked, result.problems, result.timeline)
    let seen: CrashSwitch | undefined
    for (const [n, approval] of answers.entries()) {
      let asked = false
      const baseline = yield* runPoint(
        undefined,
        undefined,
        approval,
        nextStore,
        () => {
          asked = true
        },
        logging
      )
      if (!asked && options.approvals !== undefined && n === 0 && unasked === "refuse") {
        return yield* Effect.fail(
          new NothingToExplore(
            `approvals answers ${answers.map((answer) => JSON.stringify(answer)).join(" and ")}, but the uncrashed run asked for no approval: there is no request to answer (leave approvals out)`
          )
        )
      }
      if (n > 0 && !asked) continue
      if (baseline.result.problems.length > 0)
        return yield* Effect.fail(fail("the run without a crash", approval, asked, baseline.result))
      tally(baseline)
      seen ??= baseline.crash
      const points = pointsOf(baseline.crash, kinds)
      summary.found += points.length
      const seed = options.seed ?? 1
      const chosen = yield* choose(points, options.maxPoints ?? 200, seed)
      // A point among others chosen by the seed says so: the same seed and maxPoints explore it again.
      const sampled =
        chosen.length < points.length
          ? ` (one of ${chosen.length} of the ${points.length} points, chosen with seed ${seed})`
          : ""
      for (const point of chosen) {
        const run = yield* runPoint(baseline.crash, point, approval, nextStore, () => {}, logging)
        if (run.result.problems.length > 0) {
          return yield* Effect.fail(
            fail(`${describePoint(point, baseline.crash)}${sampled}`, approval, asked, run.result)
          )
        }
        tally(run)
      }
    }
    if (kinds.length > 0 && summary.found === 0 && seen !== undefined) {
      return yield* Effect.fail(
        new NothingToExplore(
          `crashes asks for ${kinds.map((kind) => JSON.stringify(kind)).join(" and ")} crashes, but the uncrashed run made ${counted(seen.writes, "journal write")} and ${counted(seen.calls, "tool call")}: there is no such crash point to explore (crashes: [] checks the uncrashed run alone)`
        )
      )
    }
    return { ...summary, endings, calls } satisfies CrashSummary
  }).pipe(Effect.scoped)
}
