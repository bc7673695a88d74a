/**
 * What a command interrupted by SIGINT or SIGTERM (exit 130) says: one line on stderr,
 * `effect-saga: interrupted`, then what it knows it left behind, and nothing it does not know: that
 * nothing was written, that an undo it ran was interrupted and is journaled `COMPENSATION_UNKNOWN`
 * (and who goes on with the saga), or which revisions it journaled before it stopped.
 *
 * @since 0.4.0
 */
import * as Console from "effect/Console"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Predicate from "effect/Predicate"
import type { Entry } from "../../Journal.js"
import { Journal } from "../../Journal.js"
import * as Saga from "../../Saga.js"
import * as Timeline from "../../Timeline.js"
import { RUN_SUFFIX } from "../util/identifier.js"
import { type Origin, originOf } from "../util/origin.js"
import { printable } from "../util/printable.js"
import { revisionsBySaga, revisionsOf } from "../util/revisions.js"
import { shellWord } from "../util/shellWord.js"

/** What the command would say if it were interrupted now. */
interface Account {
  /** The words after `interrupted: `, if any. */
  said: string | undefined
  /** The entries its operator commands journaled, once they ended. */
  written: ReadonlyArray<Saga.WrittenEntry>
}

const current: FiberRef.FiberRef<Account | undefined> = FiberRef.unsafeMake<Account | undefined>(undefined)

const update = (change: (account: Account) => void): Effect.Effect<void> =>
  Effect.flatMap(FiberRef.get(current), (account) =>
    Effect.sync(() => {
      if (account !== undefined) change(account)
    })
  )

/**
 * What the process running the command line (`app.main`) is told once the interrupted command has
 * printed its line; nothing by default (a command line run in a program of your own). A process
 * interrupted before the command line began (while its runtime's services were being built) has
 * no line from `told`: it says itself that nothing was written.
 *
 * @since 0.5.0
 * @category interruption
 */
export const onSaid: FiberRef.FiberRef<() => void> = FiberRef.unsafeMake<() => void>(() => {})

/**
 * Runs a command line so that, interrupted, it prints its one line on stderr once everything it
 * opened is closed (its store last); failed after its operator's commands journaled entries, its
 * error is wrapped in `WroteBefore`, so that its line names them.
 *
 * @since 0.4.0
 * @category interruption
 */
export const told = <A, E, R>(commandLine: Effect.Effect<A, E, R>): Effect.Effect<A, E | WroteBefore, R> =>
  Effect.suspend(() => {
    // Before a store is opened, nothing can have been written.
    const account: Account = { said: "nothing was written", written: [] }
    return commandLine.pipe(
      Effect.locally(current, account),
      Effect.onInterrupt(() =>
        Effect.zipRight(
          Console.error(`effect-saga: ${lineOf(account)}`),
          Effect.flatMap(FiberRef.get(onSaid), (said) => Effect.sync(said))
        )
      ),
      Effect.mapError((error) =>
        account.written.length === 0 || namesItsWrites(error)
          ? error
          : new WroteBefore({ error, written: account.written })
      )
    )
  })

/**
 * A command that failed after its operator's commands journaled `written`: its line says so, as
 * it says what an interrupted command left.
 *
 * @since 0.4.0
 * @category interruption
 */
export class WroteBefore extends Data.TaggedError("WroteBefore")<{
  readonly error: unknown
  readonly written: ReadonlyArray<Saga.WrittenEntry>
}> {
  /** What the command journaled: `revisions 8–9 of saga c-1 (effect-saga show c-1 shows where it stands)`. */
  get journaled(): string {
    return Array.from(
      revisionsBySaga(this.written),
      ([sagaId, revisions]) =>
        `${revisionsOf(revisions.map((seq) => ({ seq })))} of saga ${sagaId} (effect-saga show ${shellWord(sagaId)} shows where it stands)`
    ).join("; ")
  }
}

/** Whether the error names the caller's writes itself (`ConcurrencyConflict`, `LeaseHeld`: `written`). */
const namesItsWrites = (error: unknown): boolean =>
  Predicate.hasProperty(error, "written") && typeof error.written === "number" && error.written > 0

/**
 * The line (without `effect-saga: `) an interrupted command prints.
 *
 * @since 0.4.0
 * @category interruption
 */
export const lineOf = (account: { readonly said: string | undefined }): string =>
  account.said === undefined ? "interrupted" : printable(`interrupted: ${account.said}`)

/** What an interruption says once the store is opened, by how it is opened. */
const opened: Record<"read" | "write" | "create", string> = {
  read: "nothing was written (the command only reads)",
  write: "this command journaled nothing",
  create: "an import writes its saga whole or not at all (effect-saga list shows whether it is there)"
}

/**
 * From the opening of the store on (`access`, see `Store.Access`), an interruption says what a
 * command opened so can have written: nothing for a read; for a changing command, what its
 * operator's commands journaled (`accounting`), or the command's own `words` (`serve`, `prune`:
 * what they know of their writes); for `import`, that it writes all or nothing.
 *
 * @since 0.4.0
 * @category interruption
 */
export const opening = (access: "read" | "write" | "create", words?: string | undefined): Effect.Effect<void> =>
  update((account) => {
    account.said = words ?? opened[access]
  })

/**
 * Runs a changing command's body so that, interrupted, it says what the operator's commands it ran
 * journaled (`Saga.onWritten`), read back from the journal while the store is still open.
 *
 * @since 0.4.0
 * @category interruption
 */
export const accounting = <A, E, R>(body: Effect.Effect<A, E, R>): Effect.Effect<A, E, R | Journal> =>
  body.pipe(
    Saga.onWritten((written) =>
      update((account) => {
        account.written = written
      })
    ),
    Effect.onInterrupt(() => explain)
  )

/** Reads what the operator's commands journaled, if they did, and says it. */
const explain: Effect.Effect<void, never, Journal> = Effect.flatMap(FiberRef.get(current), (account) =>
  account === undefined || account.written.length === 0
    ? Effect.void
    : Effect.map(describe(account.written), (said) => {
        account.said = said
      })
)

/** The revisions of each saga, in the order first written. */
const describe = (written: ReadonlyArray<Saga.WrittenEntry>): Effect.Effect<string, never, Journal> =>
  Effect.map(
    Effect.forEach(revisionsBySaga(written), ([sagaId, revisions]) =>
      Effect.flatMap(Journal, (journal) => journal.read(sagaId)).pipe(
        Effect.map((entries) => ofSaga(sagaId, entries, revisions)),
        // The journal cannot be read back: the revisions are still this command's.
        Effect.orElseSucceed(
          () => `this command journaled ${revisionsOf(revisions.map((seq) => ({ seq })))} of saga ${sagaId}`
        )
      )
    ),
    (parts) => parts.join("; ")
  )

/** The undo whose caller was interrupted journals this reason (`Saga.withInterruptibleUndos`). */
const INTERRUPTED_UNDO = "the undo was interrupted"

const compensationPhases: ReadonlySet<Entry["phase"]> = new Set([
  "SAGA_COMPENSATING",
  "COMPENSATING",
  "COMPENSATED",
  "COMPENSATION_PARTIAL",
  "COMPENSATION_FAILED",
  "COMPENSATION_UNKNOWN",
  "SKIPPED"
])

const ends: ReadonlySet<Entry["phase"]> = new Set(["SAGA_COMPENSATED", "SAGA_COMPENSATION_FAILED"])

/** Who goes on with a saga left compensating, by what it was started from. */
const goOn = (origin: Origin | undefined): string => {
  const again = "run the same command again to go on with the undos left"
  switch (origin?._tag) {
    case "Definition":
      return `${again}, or let a worker whose Recovery was given definition ${origin.name} go on at its next pass`
    case "Program":
      return `${again} (no Recovery can: it was started with Saga.run)`
    default:
      return again
  }
}

/** An explicit undo's run whose undo was interrupted: it is settled by asking again, then resolving it. */
const interruptedRun = (runId: string, stepId: string): string => {
  const effectId = runId.slice(0, -RUN_SUFFIX.length)
  return `the undo of step ${stepId} was interrupted and is journaled COMPENSATION_UNKNOWN in run ${runId}: first ask again, effect-saga compensate-effect ${shellWord(effectId)}, which answers unknown and runs nothing (resolve refuses the run until then); find out whether the undo (key ${runId}) happened, then effect-saga resolve ${shellWord(runId)} ${shellWord(stepId)} --applied|--not-applied --as WHO`
}

/** What this command's own entries of `sagaId` (its `revisions` among `all`) say it left. */
const ofSaga = (sagaId: string, all: ReadonlyArray<Entry>, revisions: ReadonlyArray<number>): string => {
  const own = all.filter((entry) => revisions.includes(entry.seq))
  const journaled = `this command journaled ${revisionsOf(own.length === 0 ? revisions.map((seq) => ({ seq })) : own)} of saga ${sagaId}`
  const interrupted = own.find(
    (entry) => entry.phase === "COMPENSATION_UNKNOWN" && Timeline.detailOf(entry) === INTERRUPTED_UNDO
  )
  const isRun = sagaId.endsWith(RUN_SUFFIX)
  if (isRun && interrupted !== undefined) return interruptedRun(sagaId, interrupted.stepId!)
  // A compensation it began or went on with, and did not end (no SAGA_COMPENSATED, SAGA_COMPENSATION_FAILED).
  const leftOpen =
    !isRun && own.some((entry) => compensationPhases.has(entry.phase)) && !own.some((entry) => ends.has(entry.phase))
  if (leftOpen && interrupted !== undefined) {
    return `the undo of step ${interrupted.stepId} was interrupted and is journaled COMPENSATION_UNKNOWN; saga ${sagaId} is left compensating, its lease dropped: ${goOn(originOf(all))} (that undo stays unknown)`
  }
  if (leftOpen) {
    return `${journaled} and stopped before its compensation ended; the saga is left compensating, its lease dropped: ${goOn(originOf(all))}`
  }
  return `${journaled} before it stopped (effect-saga show ${shellWord(sagaId)} shows where it stands)`
}
