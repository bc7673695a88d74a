/**
 * `effect-saga reject SAGA STEP --as WHO [--reason R] [--register MODULE]… [--json]`: rejects a
 * step, and the saga compensates there and then.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Effect from "effect/Effect"
import * as Saga from "../../../Saga.js"
import * as Parse from "../parse.js"
import { target, wroteAfter } from "../position.js"
import { printReport } from "../report.js"
import { as, db, digest, json, register, revision, saga, step, withStore } from "../root.js"
import * as Tools from "../tools.js"

const reason = Options.text("reason").pipe(
  Options.withPseudoName("TEXT"),
  Options.withDescription("Why, as the journal records it (its ends trimmed; a blank reason is refused)."),
  Options.withDefault("no reason given")
)

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
          const { seen, status, stepId } = yield* target(options.saga, options.step, options)
          yield* Tools.requireUndos("reject", status, registered)
          const report = yield* Saga.reject(options.saga, stepId, { by, reason, ...seen })
          const wrote = yield* wroteAfter(options.saga, stepId, "REJECTED", status.revision)
          yield* printReport(
            wrote
              ? `rejected step ${stepId} of saga ${options.saga} as ${by}: journaled REJECTED`
              : `step ${stepId} of saga ${options.saga} was already rejected by ${by}: nothing written`,
            report,
            options.json
          )
        }),
        { access: "write", as: by }
      )
    })
).pipe(
  Command.withDescription(
    "Reject a step awaiting approval: journaled REJECTED, and the saga compensates now, with the undos of the tools --register loads (refused if an executed step's tool is missing). Exits 1 if the report is not clean."
  )
)
