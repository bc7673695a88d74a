/**
 * `Testing.exploreCrashes`: run a saga once to learn its journal writes and tool calls, then, for
 * every one of them, run it afresh in a fresh world, kill the service there, recover it as a
 * restarted service would, and check what the journal, the counts and the world say.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Random from "effect/Random"
import type * as Scope from "effect/Scope"
import * as TestContext from "effect/TestContext"
import * as Approval from "../../Approval.js"
import * as Journal from "../../Journal.js"
import type { KeyError } from "../../Keys.js"
import * as Recovery from "../../Recovery.js"
import * as Saga from "../../Saga.js"
import type * as SagaDefinition from "../../SagaDefinition.js"
import type { SagaResult } from "../../SagaResult.js"
import * as SqlStore from "../../SqlStore.js"
import type { ApprovalAnswer, CrashKind, CrashSummary, Ending, ExploreOptions } from "../../Testing.js"
import * as Timeline from "../../Timeline.js"
import type { CallSeen, Point } from "./crash.js"
import { CrashSwitch, Ledger, storeThrough } from "./crash.js"
import type { Resolver } from "./drive.js"
import { DriveProblem, drive, truthfully } from "./drive.js"

/** What `Testing.CrashFound` is made of. */
export class Finding {
  readonly _tag = "Finding"
  constructor(
    readonly point: string,
    readonly approval: ApprovalAnswer,
    readonly problems: ReadonlyArray<string>,
    readonly timeline: string
  ) {}
}

type Store = Context.Context<Journal.Journal | Approval.Approval>
type StoreError = Journal.JournalError | Journal.JournalCorrupted | KeyError

/** Every process runs as this worker: a restarted one drops the leases its dead predecessor held. */
const owner = "effect-saga/explore"

const defaultAllow: ReadonlyArray<Ending> = ["Completed", "Compensated"]

/** Opens the store of one crash point in the scope of one process: the same memory, or the file again. */
type Opener = Effect.Effect<Store, StoreError, Scope.Scope>

const memoryStore: Layer.Layer<Journal.Journal | Approval.Approval, KeyError> = Layer.merge(
  Journal.layerMemory,
  Approval.layerMemory
)

/** A temporary directory for the SQLite files, removed with the scope. */
const temporaryDirectory = Effect.acquireRelease(
  Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-explore-"))),
  (directory) => Effect.sync(() => fs.rmSync(directory, { recursive: true, force: true }))
)

const openerFor = (
  store: "memory" | "sqlite",
  directory: string,
  index: number
): Effect.Effect<Opener, KeyError, Scope.Scope> =>
  store === "memory"
    ? Effect.map(Layer.build(memoryStore), (context): Opener => Effect.succeed(context))
    : Effect.succeed<Opener>(Layer.build(SqlStore.layerSqlite({ filename: path.join(directory, `point-${index}.db`) })))

/** One process's life over the store, as `crash` lets it live. */
const live = <X, EX, W>(
  open: Opener,
  crash: CrashSwitch,
  ledger: Ledger,
  world: Context.Context<W>,
  services: Layer.Layer<any, unknown, any>,
  body: Effect.Effect<X, EX, any>
): Effect.Effect<X, EX | StoreError | unknown> =>
  Effect.scoped(
    Effect.gen(function* () {
      const raw = yield* open
      const seen = storeThrough(crash, Context.get(raw, Journal.Journal), Context.get(raw, Approval.Approval))
      const store = Context.make(Journal.Journal, seen.journal).pipe(Context.add(Approval.Approval, seen.approval))
      const saga = yield* Effect.provide(Layer.build(Saga.layerWith({ owner })), store)
      const process = Context.merge(Context.merge(world, store), Context.merge(saga, ledger.faults(crash)))
      const built = yield* Effect.provide(Layer.build(services), process)
      return yield* Effect.provide(body, Context.merge(process, built))
    })
  )

/** Lives until the process finishes or is killed; a killed process is interrupted whatever it was doing. */
const liveUntilKilled = <X, EX>(life: Effect.Effect<X, EX>, crash: CrashSwitch) =>
  Effect.gen(function* () {
    const fiber = yield* Effect.fork(life)
    yield* Effect.raceFirst(Effect.asVoid(Fiber.await(fiber)), crash.killed.pipe(Effect.asVoid))
    if (crash.crashed) yield* Fiber.interrupt(fiber)
    return yield* Fiber.await(fiber)
  })

const describeError = (error: unknown): string => (error instanceof Error ? error.message : String(error))

const describeExit = (exit: Exit.Exit<unknown, unknown>): string => {
  if (Exit.isSuccess(exit)) return "succeeded"
  const failure = Cause.failureOption(exit.cause)
  if (Option.isSome(failure))
    return describeError(failure.value instanceof DriveProblem ? failure.value.reason : failure.value)
  return Cause.isInterruptedOnly(exit.cause) ? "it was interrupted" : Cause.pretty(exit.cause).split("\n")[0]!
}

const describeCall = (call: CallSeen) =>
  `${call.toolName} ${call.site === "execute" ? "call" : "undo"} of step ${call.stepId}`

const describeEntries = (entries: ReadonlyArray<Journal.Entry>) =>
  entries
    .map((entry) => `seq ${entry.seq} ${entry.phase}${entry.toolName === null ? "" : ` ${entry.toolName}`}`)
    .join(", ")

/** An entry as a run that repeats another must write it again (its time and hash aside). */
const shapeOf = (entry: Journal.Entry) =>
  `seq ${entry.seq} ${entry.phase} ${entry.toolName ?? ""} ${entry.stepId ?? ""}`

/** Where the run that was to crash first wrote something else than the uncrashed run, if it did. */
const divergence = (baseline: CrashSwitch, run: CrashSwitch): string | undefined => {
  for (const [index, entries] of run.written.entries()) {
    const expected = (baseline.written[index] ?? []).map(shapeOf).join(", ")
    const written = entries.map(shapeOf).join(", ")
    if (written !== expected) {
      return `the run did not repeat the uncrashed run (is the program deterministic?): its journal write ${index + 1} was [${written}] where the uncrashed run wrote [${expected || "nothing"}]`
    }
  }
  return undefined
}

/** A crash point in words, from what the uncrashed run did there. */
const describePoint = (point: Point, baseline: CrashSwitch): string =>
  point._tag === "AfterWrite"
    ? `after journal write ${point.write} of ${baseline.writes} (${describeEntries(baseline.written[point.write - 1] ?? [])})`
    : `after tool call ${point.call} of ${baseline.calls} ended (${describeCall(baseline.seen[point.call - 1]!)}), before its outcome was journaled`

/** The crash points of the kinds asked for, as many as the uncrashed run made writes and calls. */
const pointsOf = (baseline: CrashSwitch, kinds: ReadonlyArray<CrashKind>): Array<Point> => [
  ...(kinds.includes("after-write")
    ? Array.from({ length: baseline.writes }, (_, i): Point => ({ _tag: "AfterWrite", write: i + 1 }))
    : []),
  ...(kinds.includes("before-outcome")
    ? Array.from({ length: baseline.calls }, (_, i): Point => ({ _tag: "BeforeOutcome", call: i + 1 }))
    : [])
]

/** At most `max` of `points`, chosen by a generator seeded with `seed`, in their order. */
const choose = (points: Array<Point>, max: number, seed: number) =>
  points.length <= max
    ? Effect.succeed(points)
    : Effect.map(Random.make(seed).shuffle(points.keys()), (keys) =>
        Chunk.toArray(keys)
          .slice(0, max)
          .sort((a, b) => a - b)
          .map((key) => points[key]!)
      )

/** The undos a crash hid: started by the dead process (`COMPENSATING` by its last seq), found unsettled after it. */
const hiddenUndos = (entries: ReadonlyArray<Journal.Entry>, lastSeq: number): Set<string> => {
  const startedBefore = new Set<string | null>()
  const hidden = new Set<string>()
  for (const entry of entries) {
    if (entry.phase === "COMPENSATING" && entry.seq <= lastSeq) startedBefore.add(entry.stepId)
    if (entry.phase === "COMPENSATION_UNKNOWN" && entry.seq > lastSeq && startedBefore.has(entry.stepId)) {
      hidden.add(entry.stepId!)
    }
  }
  return hidden
}

/** Whether a `CompensationFailed` is what the engine promises after a crash: only undos the crash hid are unsettled. */
const excused = (result: SagaResult<unknown, unknown>, hidden: Set<string>): boolean =>
  result._tag === "CompensationFailed" &&
  hidden.size > 0 &&
  result.report.undone.every(
    (step) =>
      step.outcome === "completed" ||
      step.outcome === "skipped" ||
      (step.outcome === "unknown" && hidden.has(step.stepId))
  ) &&
  result.report.notUndone.every((step) => step.phase === "FAILED")

/** What one crash point came to. */
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

/** Explores with one approval answer. */
export const explore = <I, A, E, R, W, EW, S, ES>(
  definition: SagaDefinition.SagaDefinition<I, A, E, R>,
  input: I,
  options: ExploreOptions<W, EW, S, ES>
): Effect.Effect<CrashSummary, Finding | EW | StoreError> => {
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
    onApproval: () => void
  ): Effect.Effect<PointRun, EW | StoreError> =>
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
      let exit = yield* liveUntilKilled(
        Effect.exit(live(open, dying, ledger, world, services, driven)).pipe(Effect.flatten),
        dying
      )
      const problems: Array<string> = []
      const diverged = baseline === undefined ? undefined : divergence(baseline, dying)
      if (diverged !== undefined) problems.push(diverged)
      else if (point !== undefined && !dying.crashed) {
        problems.push(
          `the run ended after ${dying.writes} journal writes and ${dying.calls} tool calls without reaching this point: the saga did not repeat what its first run did (is it deterministic?)`
        )
      }
      if (dying.crashed) {
        const healthy = yield* CrashSwitch.make(undefined)
        const recovering = Effect.gen(function* () {
          const recovery = yield* Recovery.make({ definitions: [definition] })
          const report = yield* recovery.recoverAll
          for (const saga of report.sagas) {
            if (saga._tag === "Failed")
              return yield* Effect.fail(new DriveProblem(`recovery failed: ${describeError(saga.error)}`))
          }
          return yield* driven
        }) as Effect.Effect<SagaResult<unknown, unknown>, unknown, Saga.Saga | Journal.Journal | W>
        exit = yield* Effect.exit(live(open, healthy, ledger, world, services, recovering))
      }
      const result = yield* check(point, exit, open, dying.lastSeq, world, ledger, problems)
      return { result, ledger, crash: dying }
    }).pipe(Effect.scoped, Effect.provide(TestContext.TestContext))

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
              verification: Journal.verify(sagaId)
            }),
            store
          )
        )
      )
      const hidden = point === undefined ? new Set<string>() : hiddenUndos(entries, lastSeq)
      let ending: Ending | undefined
      let excusedUndos = 0
      if (Exit.isFailure(exit)) {
        problems.push(`${point === undefined ? "the run" : "recovery"} failed: ${describeExit(exit)}`)
      } else {
        const result = exit.value
        ending = result._tag
        if (!allow.includes(result._tag) && excused(result, hidden)) excusedUndos = hidden.size
        else if (!allow.includes(result._tag)) {
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
          const holds = yield* Effect.exit(Effect.provide(invariant.holds(ending), world))
          if (Exit.isFailure(holds))
            problems.push(`invariant "${invariant.name}" could not be checked: ${describeExit(holds)}`)
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
    const directory = options.store === "sqlite" ? yield* temporaryDirectory : ""
    const nextStore = storeFor(directory)
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
          execute: counts.execute + step.mayHaveApplied,
          compensate: counts.compensate + step.undos
        }
      }
    }
    const fail = (point: string, approval: ApprovalAnswer, result: PointResult) =>
      new Finding(point, approval, result.problems, result.timeline)
    for (const [n, approval] of answers.entries()) {
      let asked = false
      const baseline = yield* runPoint(undefined, undefined, approval, nextStore, () => {
        asked = true
      })
      if (n > 0 && !asked) continue
      if (baseline.result.problems.length > 0)
        return yield* Effect.fail(fail("nowhere (the run without a crash)", approval, baseline.result))
      tally(baseline)
      const points = pointsOf(baseline.crash, kinds)
      summary.found += points.length
      for (const point of yield* choose(points, options.maxPoints ?? 200, options.seed ?? 1)) {
        const run = yield* runPoint(baseline.crash, point, approval, nextStore, () => {})
        if (run.result.problems.length > 0) {
          return yield* Effect.fail(fail(describePoint(point, baseline.crash), approval, run.result))
        }
        tally(run)
      }
    }
    return { ...summary, endings, calls } satisfies CrashSummary
  }).pipe(Effect.scoped)
}

const formatReport = (result: SagaResult<unknown, unknown>): string =>
  "report" in result
    ? result.report.undone
        .map(
          (step) =>
            `    ${step.outcome} ${step.toolName} (${step.stepId})${step.detail === undefined ? "" : `: ${step.detail}`}`
        )
        .join("\n")
    : ""

/** A forward call that does not declare it may be retried ran twice for one step, or an undo ran twice. */
export const countProblems = (ledger: Ledger): Array<string> => {
  const problems: Array<string> = []
  for (const step of ledger.steps.values()) {
    if (step.spec.retryMode !== "idempotency-key" && step.mayHaveApplied > 1) {
      problems.push(
        `${step.toolName} ran ${step.mayHaveApplied} times for step ${step.stepId}; it does not declare retryMode "idempotency-key", so it may run once`
      )
    }
    if (step.undos > 1) {
      problems.push(
        `the undo of ${step.toolName} ran ${step.undos} times for step ${step.stepId}; an undo runs at most once per step`
      )
    }
  }
  return problems
}
