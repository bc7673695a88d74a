/**
 * `effect-saga reject SAGA STEP --as WHO [--reason R] [--register MODULE]… [--json]`: rejects a
 * step, and the saga compensates there and then.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Effect from "effect/Effect"
import { type Entry, Journal } from "../../../Journal.js"
import * as Saga from "../../../Saga.js"
import { tamperedRecord } from "../../util/approvalRecord.js"
import { rejectMayUndo } from "../../util/undoNeeded.js"
import * as Parse from "../parse.js"
import { type Pointed, revisionsOf, target } from "../position.js"
import { printReport } from "../report.js"
import { as, db, digest, json, register, revision, saga, step, withStore } from "../root.js"
import * as Tools from "../tools.js"

const reason = Options.text("reason").pipe(
  Options.withPseudoName("TEXT"),
  Options.withDescription("Why, as the journal records it (its ends trimmed; a blank reason is refused)."),
  Options.withDefault("no reason given")
)

/**
 * What a `reject` says it did, from the entries it wrote: the rejection; or, asked again after a
 * `reject` that stopped mid-way (killed during an undo), the rest of the compensation that
 * rejection started; or nothing, for an exact replay.
 */
const saidOf = (sagaId: string, stepId: string, by: string, written: ReadonlyArray<Entry>): string => {
  if (written.some((entry) => entry.phase === "REJECTED" && entry.stepId === stepId)) {
    return `rejected step ${stepId} of saga ${sagaId} as ${by}: journaled REJECTED`
  }
  const already = `step ${stepId} of saga ${sagaId} was already rejected by ${by}`
  return written.length === 0
    ? `${already}: nothing written`
    : `${already}: this call finished the compensation that rejection started (journaled ${revisionsOf(written)})`
}

/**
 * What `reject` does on the store it opened (with the tools it registered), and what it says it
 * did: from the entries this call wrote itself (`Saga.withWrittenRevisions`), never from whatever
 * follows where it read the saga (of two sent at once, one writes and the other finds that write).
 *
 * @since 0.4.0
 * @category commands
 */
export const rejectOn = (
  pointed: Pointed,
  rejection: { readonly by: string; readonly reason: string; readonly registered: ReadonlySet<string> }
) =>
  Effect.gen(function* () {
    const { by, reason } = rejection
    const { seen, status, stepId } = yield* target(pointed.saga, pointed.step, pointed)
    // An edited approvals row is refused whatever tools are registered: said first.
    const tampered = yield* tamperedRecord(pointed.saga, stepId)
    if (tampered !== undefined) return yield* tampered
    const rejected = status.steps.find((known) => known.stepId === stepId)
    // A step the saga does not have is refused by the reject itself, as one that cannot undo it is.
    if (rejected !== undefined && rejectMayUndo(rejected))
      yield* Tools.requireUndos("reject", status, rejection.registered)
    const { revisions, value: report } = yield* Saga.withWrittenRevisions(
      Saga.withInterruptibleUndos(Saga.reject(pointed.saga, stepId, { by, reason, ...seen }))
    )
    const entries = yield* Effect.flatMap(Journal, (journal) => journal.read(pointed.saga))
    const written = entries.filter((entry) => revisions.includes(entry.seq))
    return { said: saidOf(pointed.saga, stepId, by, written), report }
  })

/**
 * The `reject` command.
 *
 * @since 0.1.0
 * @category commands
 */
export const reject = Command.make(
  "reject",
  { db, as, reason, register, revision, digest, json, saga, step },
  (options) =>
    Effect.gen(function* () {
      const by = yield* Parse.nonBlank("--as", options.as)
      // As the console reads its form: the ends trimmed, a blank reason refused.
      const reason = (yield* Parse.nonBlank("--reason", options.reason)).trim()
      yield* withStore(
        options.db,
        Effect.gen(function* () {
          const registered = yield* Tools.register(options.register)
          const { report, said } = yield* rejectOn(options, { by, reason, registered })
          yield* printReport(said, report, options.json)
        }),
        { access: "write", as: by }
      )
    })
).pipe(
  Command.withDescription(
    "Reject a step awaiting approval: journaled REJECTED, and the saga compensates now, with the undos of the tools --register loads (refused if an executed step's tool is missing). Exits 1 if the report is not clean."
  )
)
