/**
 * `effect-saga resolve SAGA STEP --applied --result JSON | --not-applied --as WHO`: settles a step
 * whose outcome is unknown, or (SAGA the run of an explicit undo) an undo whose outcome is unknown,
 * or (SAGA `compensation_failed`) the undo its compensation left not undone of a step: `--applied`,
 * with no `--result`, says the effect is undone now.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { Journal } from "../../../Journal.js"
import * as Saga from "../../../Saga.js"
import * as Timeline from "../../../Timeline.js"
import { RUN_SUFFIX } from "../../util/identifier.js"
import { printable } from "../../util/printable.js"
import { shellWord } from "../../util/shellWord.js"
import * as ToResolve from "../../util/toResolve.js"
import * as UndoRunAdvice from "../../util/undoRunAdvice.js"
import { settlesUndo, speaksOfCall } from "../../util/undoToResolve.js"
import { UsageError } from "../failure.js"
import { print } from "../output.js"
import * as Parse from "../parse.js"
import { type Pointed, target } from "../position.js"
import * as ReceiptSource from "../receiptSource.js"
import { as, db, digest, register, revision, saga, step, withStore } from "../root.js"
import { readStdin } from "../stdin.js"
import * as Tools from "../tools.js"

const applied = Options.boolean("applied").pipe(
  Options.withDescription(
    "The call happened: journaled EXECUTED with --result. For a step whose undo a failed compensation left not undone: the effect is undone now (journaled COMPENSATED, no --result)."
  )
)

const notApplied = Options.boolean("not-applied").pipe(
  Options.withDescription(
    "The call did not happen: journaled FAILED; the saga compensates when resumed. For a step whose undo answered unknown in a failed compensation: the undo did not happen (journaled COMPENSATION_FAILED)."
  )
)

const undone = Options.boolean("undone").pipe(
  Options.withDescription(
    "With --applied and --result, once the saga began to compensate: the call happened and you undid its effect by hand since (journaled EXECUTED and COMPENSATED, resolved as undone by WHO): a compensation again counts it undone and never runs its undo. For a step compensation passed over as unknown, which --applied alone may not settle (its undo would come out of reverse order)."
  )
)

const receipt = Options.text("receipt").pipe(
  Options.withPseudoName("SOURCE"),
  Options.withDescription(
    "With --applied: where to read the receipt the provider gave for the call (what the tool's undo needs), never the receipt itself: - reads it from stdin, env:NAME from the environment variable NAME. Journaled as the tool's own receipt is, sealed under EFFECT_SAGA_RECEIPT_KEYS when set; never printed."
  ),
  Options.optional
)

const result = Options.text("result").pipe(
  Options.withPseudoName("JSON"),
  Options.withDescription(
    "With --applied: the tool's result as JSON, encoded as its success schema encodes it (null if it returns nothing); - reads it from stdin (a result larger than a command line holds). Checked against the schema when --register loads the tool."
  ),
  Options.optional
)

/** The resolution the flags describe, or why they describe none. */
const resolutionOf = (options: {
  readonly applied: boolean
  readonly notApplied: boolean
  readonly result: Option.Option<string>
  readonly receipt: Option.Option<string>
  readonly undone: boolean
  readonly by: string
  /** The resolution settles an undo (an explicit undo's run, or a step's undo): `--applied` takes no result. */
  readonly undo: boolean
}) => {
  if (options.applied === options.notApplied) {
    return Effect.fail(new UsageError({ message: "pass exactly one of --applied and --not-applied" }))
  }
  if (options.notApplied) {
    return Option.isSome(options.result) || Option.isSome(options.receipt) || options.undone
      ? Effect.fail(new UsageError({ message: "--result, --receipt and --undone go with --applied only" }))
      : Effect.succeed({ outcome: "not-applied" as const, by: options.by })
  }
  if (options.undo && options.undone) {
    return Effect.fail(
      new UsageError({
        message:
          "--undone does not go with the resolution of an undo (an explicit undo's run, or a step whose undo a failed compensation left not undone): --applied alone says the effect is undone now"
      })
    )
  }
  if (options.undo) {
    return Option.isSome(options.result) || Option.isSome(options.receipt)
      ? Effect.fail(
          new UsageError({
            message:
              "--result and --receipt do not go with the resolution of an undo (an explicit undo's run, or a step whose undo a failed compensation left not undone): --applied says the effect is undone now"
          })
        )
      : Effect.succeed({ outcome: "applied" as const, by: options.by })
  }
  return Option.match(options.result, {
    onNone: () =>
      Effect.fail(
        new UsageError({ message: "--applied needs --result JSON: what the tool returned (null if nothing)" })
      ),
    onSome: (text) =>
      Effect.all({
        result: Effect.flatMap(resultText(text, options.receipt), (json) => Parse.json("--result", json)),
        receipt: Option.match(options.receipt, {
          onNone: () => Effect.succeed(undefined),
          onSome: ReceiptSource.read
        })
      }).pipe(
        Effect.map(({ receipt, result }) => ({
          outcome: "applied" as const,
          by: options.by,
          result,
          receipt,
          ...(options.undone ? { undone: true } : {})
        }))
      )
  })
}

/**
 * The result's JSON as `--result` gives it: itself, or, for `-`, stdin to its end (a result larger
 * than one command-line argument may be, 128 KiB on Linux). Stdin is read once: not for both
 * `--result -` and `--receipt -`.
 */
const resultText = (text: string, receipt: Option.Option<string>): Effect.Effect<string, UsageError> => {
  if (text !== "-") return Effect.succeed(text)
  if (Option.getOrUndefined(receipt) === "-") {
    return Effect.fail(
      new UsageError({ message: "--result - and --receipt - both read stdin: give the receipt as env:NAME" })
    )
  }
  return Effect.mapError(
    readStdin(),
    (error) => new UsageError({ message: `--result: stdin could not be read (${error.message})` })
  )
}

/** What a resolution settles: a step's call, the undo of an explicit undo's run, or a step's undo. */
type Settled = "call" | "undo-run" | "step-undo"

/** What the command says it did. */
const reportOf = (done: {
  readonly settled: Settled
  readonly wrote: boolean
  readonly applied: boolean
  readonly journaled: string
  readonly by: string
  readonly stepId: string
  readonly saga: string
  readonly compensated: boolean
  /** The step whose journaled failure binds the saga to compensate once resolved (`Timeline.failureToUndo`). */
  readonly failed?: string | undefined
  /** The steps the saga's program cannot replay once resolved (`Timeline.notReplayable`). */
  readonly notReplayable?: ReadonlyArray<string> | undefined
  /** The steps still unknown once resolved, and where the saga stands then (`--revision N --digest H`). */
  readonly unresolved?: ReadonlyArray<string> | undefined
  readonly at?: string | undefined
  /** The call happened and its effect was undone by hand (`--undone`). */
  readonly undone?: boolean | undefined
  /** What an explicit undo's run answers once resolved. */
  readonly answer?: string | undefined
}): string => {
  const { by, journaled, saga, stepId } = done
  if (done.settled === "step-undo") {
    const how = done.applied ? "undone" : "not undone"
    const goOn = done.applied
      ? `its compensation already ran: compensate the saga again (effect-saga compensate ${shellWord(saga)}), which counts this step undone without running its undo again and journals a new report`
      : "its effect is still in place: undo it by hand, then resolve the step again with --applied"
    return done.wrote
      ? `resolved the undo of step ${stepId} of saga ${saga} as ${how} (${by}): journaled ${journaled}; ${goOn}`
      : `the undo of step ${stepId} of saga ${saga} was already resolved as ${how} by ${by}: nothing written`
  }
  if (done.settled === "undo-run") {
    const how = done.applied ? "undone" : "not undone"
    return done.wrote
      ? `resolved the undo of step ${stepId} in run ${saga} as ${how} (${by}); ${UndoRunAdvice.closed(done.answer ?? (done.applied ? "completed" : "failed"))}`
      : `the undo of step ${stepId} in run ${saga} was already resolved as ${how} by ${by}: nothing written`
  }
  const outcome = done.undone ? "applied and undone by hand" : done.applied ? "applied" : "not-applied"
  const owed = done.undone ? "which counts it undone without running its undo" : "which runs any undo still owed"
  const goOn = done.compensated
    ? `its compensation already ran: compensate the saga again (effect-saga compensate ${shellWord(saga)}), ${owed} and journals a new report`
    : ToResolve.resumeAfterResolve(
        done.failed,
        done.notReplayable ?? [],
        `effect-saga compensate ${shellWord(saga)} --register MODULE --as WHO${done.unresolved?.length === 0 && done.at !== undefined ? ` ${done.at}` : ""}`,
        done.unresolved
      )
  return done.wrote
    ? `resolved step ${stepId} of saga ${saga} as ${outcome} (${by}): journaled ${journaled}; ${goOn}`
    : `step ${stepId} of saga ${saga} was already resolved as ${outcome} by ${by}: nothing written`
}

/**
 * What `resolve` does on the store it opened, and what it says it did: whether this call journaled
 * the resolution (`Saga.withWrites`), never whether the saga moved since it read it.
 *
 * @since 0.4.0
 * @category commands
 */
export const resolveOn = <E>(
  pointed: Pointed,
  resolutionFor: (undoOfStep: boolean) => Effect.Effect<Saga.Resolution, E>,
  undoRun: boolean
) =>
  Effect.gen(function* () {
    const { seen, status, stepId } = yield* target(pointed.saga, pointed.step, pointed)
    // Whether `--applied` alone resolves the step's undo (it takes no `--result` then), read from the saga just read.
    const resolution = yield* resolutionFor(settlesStepUndo(status, stepId, { outcome: "applied", by: "" }))
    const settled: Settled = undoRun ? "undo-run" : settlesStepUndo(status, stepId, resolution) ? "step-undo" : "call"
    const { written } = yield* Saga.withWrites(Saga.resolve(pointed.saga, stepId, { ...resolution, ...seen }))
    const applied = resolution.outcome === "applied"
    const undone = resolution.outcome === "applied" && resolution.undone === true
    const journaled =
      settled === "call"
        ? applied
          ? `EXECUTED${undone ? " and COMPENSATED" : ""}`
          : "FAILED"
        : applied
          ? "COMPENSATED"
          : "COMPENSATION_FAILED"
    const { by } = resolution
    // A saga whose compensation already ran (`compensation_failed`) does not go on when resumed.
    const after = written > 0 && settled !== "step-undo" ? yield* Saga.status(pointed.saga) : undefined
    const compensated = settled === "call" && after?.status === "compensation_failed"
    const answer = after?.steps.find((step) => step.stepId === stepId)?.undo ?? undefined
    // Whether a resume goes on or compensates, as the journal now says.
    const entries =
      settled === "call" && after !== undefined
        ? yield* Effect.flatMap(Journal, (journal) => journal.read(pointed.saga))
        : []
    return reportOf({
      failed: Timeline.failureToUndo(entries),
      notReplayable: Timeline.notReplayable(entries),
      unresolved: after === undefined ? undefined : ToResolve.toResolve(after.steps).map((step) => step.stepId),
      at: after === undefined ? undefined : `--revision ${after.revision} --digest ${after.digest}`,
      settled,
      wrote: written > 0,
      applied,
      journaled,
      by,
      stepId,
      saga: pointed.saga,
      compensated,
      undone,
      answer
    })
  })

/** Whether the resolution settles the undo of step `stepId` of the saga `status` shows (see `settlesUndo`), not its call. */
const settlesStepUndo = (status: Saga.SagaStatus, stepId: string, resolution: Saga.Resolution): boolean => {
  const step = status.steps.find((candidate) => candidate.stepId === stepId)
  return step !== undefined && !speaksOfCall(resolution) && settlesUndo(status.status, step)
}

/**
 * The `resolve` command.
 *
 * @since 0.1.0
 * @category commands
 */
export const resolve = Command.make(
  "resolve",
  { db, as, applied, notApplied, undone, result, receipt, register, revision, digest, saga, step },
  (options) =>
    Effect.gen(function* () {
      const by = yield* Parse.nonBlank("--as", options.as)
      // The run of an explicit undo (`…/compensate-effect`, a name no saga may have): its undo is resolved.
      const undoRun = options.saga.endsWith(RUN_SUFFIX)
      // --applied alone may resolve a step's undo: whether it does is read from the saga, once it is open.
      const readsSaga = !undoRun && options.applied && !options.notApplied && Option.isNone(options.result)
      const early = readsSaga ? undefined : yield* resolutionOf({ ...options, by, undo: undoRun })
      const resolutionFor = (undoOfStep: boolean) =>
        early === undefined ? resolutionOf({ ...options, by, undo: undoOfStep }) : Effect.succeed(early)
      yield* withStore(
        options.db,
        Effect.gen(function* () {
          yield* Tools.register(options.register)
          yield* print(printable(yield* resolveOn(options, resolutionFor, undoRun)))
        }),
        { access: "write", as: by }
      )
    })
).pipe(
  Command.withDescription(
    "Settle a step whose outcome is unknown, as applied (with its result) or not applied; resume the saga afterwards. --applied is refused once compensation undid a step that ran before it. In a saga compensation_failed, settles a step whose undo failed, was partial, answered unknown or was unavailable: --applied (no --result) says the effect is undone now (the undo happened, or you undid it by hand), --not-applied (an unknown undo only) that it did not; then compensate the saga again, which does not run that undo again. --receipt - (stdin) or env:NAME gives the receipt the undo needs, never on the command line. Given the run of an explicit undo (SAGA ending /compensate-effect) whose undo answered unknown, settles that undo: --applied (it happened, no --result) or --not-applied; given one that ended compensation_failed (its undo failed, was rejected, partial or unavailable), closes it: --applied once the effect is undone (by hand, or by the saga's compensation), --not-applied to keep the effect as it is (refused for a partial undo). Either way the run ends completed. Asked again exactly as before (same --as, outcome and result), it says the step was already resolved and writes nothing (exit 0)."
  )
)
