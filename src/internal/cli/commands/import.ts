/**
 * `effect-saga import FILE`: reads a saga's NDJSON export into the journal.
 *
 * @since 0.1.0
 */
import * as fs from "node:fs"
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Effect from "effect/Effect"
import * as Journal from "../../../Journal.js"
import { printable } from "../../util/printable.js"
import { UsageError } from "../failure.js"
import { print } from "../output.js"
import { db, withStore } from "../root.js"
import { readStdin, type Stdin } from "../stdin.js"

const file = Args.text({ name: "FILE" }).pipe(Args.withDescription("The NDJSON export to import; - reads stdin."))

/**
 * The file's text, or stdin's to its end (`readStdin`: however slowly its writer goes, and
 * stopped, stdin destroyed, when the command is interrupted).
 *
 * @since 0.5.0
 * @category reading
 */
export const readInput = (file: string, stdin?: Stdin): Effect.Effect<string, UsageError> =>
  Effect.mapError(
    file === "-"
      ? readStdin(stdin)
      : Effect.tryPromise({
          try: (signal) => fs.promises.readFile(file, { encoding: "utf8", signal }),
          catch: (error) => (error instanceof Error ? error : new Error(String(error)))
        }),
    (error) => new UsageError({ message: `cannot read ${file}: ${error.message}` })
  )

/**
 * The `import` command.
 *
 * @since 0.1.0
 * @category commands
 */
export const importSaga = Command.make("import", { db, file }, (options) =>
  Effect.flatMap(readInput(options.file), (text) =>
    withStore(
      options.db,
      Effect.flatMap(Journal.importNdjson(text), (record) =>
        print(
          printable(
            `imported saga ${record.sagaId}: ${record.status}, revision ${record.revision}, digest ${record.digest}`
          )
        )
      ),
      { access: "create" }
    )
  )
).pipe(
  Command.withDescription(
    "Import one saga's NDJSON export (all or nothing: every line must decode, the hash chain must verify, the end line must match, the saga must be new). Creates the database if the file does not exist."
  )
)
