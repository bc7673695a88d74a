/**
 * `effect-saga import FILE`: reads a saga's NDJSON export into the journal.
 *
 * @since 0.1.0
 */
import * as fs from "node:fs"
import { text } from "node:stream/consumers"
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Effect from "effect/Effect"
import * as Journal from "../../../Journal.js"
import { printable } from "../../util/printable.js"
import { UsageError } from "../failure.js"
import { print } from "../output.js"
import { db, withStore } from "../root.js"

const file = Args.text({ name: "FILE" }).pipe(Args.withDescription("The NDJSON export to import; - reads stdin."))

/**
 * The file's text, or stdin's to its end. Stdin is read as a stream: a pipe whose writer is slower
 * than this process (`effect-saga export … | effect-saga import -`) is empty for a while, and a
 * synchronous read of a non-blocking pipe fails then (`EAGAIN`). Interrupted (SIGINT, SIGTERM),
 * the read stops and stdin is destroyed: a stdin still open (a terminal, a writer that stalls)
 * would otherwise keep the process alive after it said it was interrupted.
 *
 * @since 0.5.0
 * @category reading
 */
export const readInput = (file: string, stdin: NodeJS.ReadableStream & { destroy(): unknown } = process.stdin) =>
  Effect.tryPromise({
    try: (signal) => {
      if (file !== "-") return fs.promises.readFile(file, { encoding: "utf8", signal })
      signal.addEventListener("abort", () => stdin.destroy(), { once: true })
      return text(stdin)
    },
    catch: (error) =>
      new UsageError({ message: `cannot read ${file}: ${error instanceof Error ? error.message : String(error)}` })
  })

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
