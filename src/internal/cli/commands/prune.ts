/**
 * `effect-saga prune --finished-before DATE [--dry-run] [--json]`: deletes finished sagas.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Effect from "effect/Effect"
import * as Journal from "../../../Journal.js"
import { printable } from "../../util/printable.js"
import { SomethingWrong } from "../failure.js"
import { print, printJson } from "../output.js"
import * as Parse from "../parse.js"
import { db, json, withStore } from "../root.js"
import * as Trust from "../trust.js"

const finishedBefore = Options.text("finished-before").pipe(
  Options.withPseudoName("DATE"),
  Options.withDescription(
    "Delete sagas finished and last updated before this time (ISO-8601: 2025-01-31 or 2025-01-31T12:00:00Z)."
  )
)

const dryRun = Options.boolean("dry-run").pipe(Options.withDescription("Only list what would be deleted."))

/** Those of `sagaIds` whose journal does not verify, with the break. */
const untrusted = (sagaIds: ReadonlyArray<string>) =>
  Effect.map(
    Effect.forEach(sagaIds, (sagaId) =>
      Effect.map(Trust.inspect(sagaId), (inspection) => ({ sagaId, mark: Trust.tamperedOf(inspection.verification) }))
    ),
    (verdicts) => verdicts.flatMap(({ sagaId, mark }) => (mark === null ? [] : [{ sagaId, mark }]))
  )

/**
 * The `prune` command.
 *
 * @since 0.1.0
 * @category commands
 */
export const prune = Command.make("prune", { db, finishedBefore, dryRun, json }, (options) =>
  Effect.flatMap(Parse.instant("--finished-before", options.finishedBefore), (before) =>
    withStore(
      options.db,
      Effect.gen(function* () {
        // A journal that does not verify is evidence: prune deletes none of it (nor anything else).
        const tampered = yield* untrusted(yield* Journal.prunable(before))
        if (tampered.length > 0) {
          yield* options.json
            ? printJson({ tampered: tampered.map(({ sagaId, mark }) => ({ sagaId, ...mark })) })
            : print(tampered.map(({ sagaId, mark }) => Trust.line(sagaId, mark)).join("\n"))
          return yield* new SomethingWrong({
            reason: "prune found sagas whose journal does not verify",
            line: `prune would delete ${tampered.length} saga(s) whose journal does not verify: nothing was deleted; keep them for a person to look at (effect-saga show SAGA), restore them from a backup, or give an earlier --finished-before`
          })
        }
        const sagaIds = options.dryRun
          ? yield* Journal.prunable(before)
          : yield* Effect.flatMap(Journal.Journal, (journal) => journal.prune(before))
        const verb = options.dryRun ? "would prune" : "pruned"
        yield* options.json
          ? printJson(sagaIds)
          : print(
              printable(
                `${verb} ${sagaIds.length} saga(s) finished before ${before}${sagaIds.length === 0 ? "" : `: ${sagaIds.join(", ")}`}`
              )
            )
      }),
      options.dryRun
        ? { access: "read" }
        : {
            access: "write",
            interrupted: `prune deletes in one transaction, all it found or none of it: prune --finished-before ${before} --dry-run lists what is left`
          }
    )
  )
).pipe(
  Command.withDescription(
    "Delete the sagas that finished with nothing left live (completed, compensated) and were last updated before DATE, with their entries; nothing running, suspended, compensating, awaiting approval, needing attention or compensation_failed is ever deleted. Deletes nothing, and exits 1, if a saga it would delete does not verify."
  )
)
