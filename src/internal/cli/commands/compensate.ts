/**
 * `effect-saga compensate SAGA --register MODULE… [--as WHO] [--json]`: undoes a saga on an operator's request.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Effect from "effect/Effect"
import * as Saga from "../../../Saga.js"
import * as Parse from "../parse.js"
import { seen, verifiedStatus } from "../position.js"
import { printReport } from "../report.js"
import { as, db, digest, json, register, revision, saga, withStore } from "../root.js"
import * as Tools from "../tools.js"

const operator = as.pipe(Options.optional)

/**
 * The `compensate` command.
 *
 * @since 0.1.0
 * @category commands
 */
export const compensate = Command.make(
  "compensate",
  { db, as: operator, register, revision, digest, json, saga },
  (options) =>
    Effect.flatMap(Parse.optionalPrincipal("--as", options.as), (by) =>
      withStore(
        options.db,
        Effect.gen(function* () {
          const registered = yield* Tools.register(options.register)
          const status = yield* verifiedStatus(options.saga)
          yield* Tools.requireUndos("compensate", status, registered)
          // SIGINT and SIGTERM stop the undo in flight too (the answer is then exit 130).
          const report = yield* Saga.withInterruptibleUndos(Saga.compensate(options.saga, seen(status, options)))
          yield* printReport(undefined, report, options.json)
        }),
        { access: "write", as: by }
      )
    )
).pipe(
  Command.withDescription(
    "Undo every executed step of a saga not undone yet, in reverse order, with the undos of the tools --register loads (refused if one is missing); never undoes a step twice. Exits 1 if the report is not clean."
  )
)
