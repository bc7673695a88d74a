/**
 * The `effect-saga` application: the root command with the command table, the exit code of a run,
 * and running it as a Node process.
 *
 * @since 0.1.0
 */
import type * as CliApp from "@effect/cli/CliApp"
import * as Command from "@effect/cli/Command"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Inspectable from "effect/Inspectable"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import { packageVersion } from "../util/packageVersion.js"
import { printable } from "../util/printable.js"
import * as Answered from "./answered.js"
import { commands } from "./commandTable.js"
import type { Ending } from "./failure.js"
import { endingOf, UsageError } from "./failure.js"
import { helpConsole } from "./help.js"
import * as Interruption from "./interruption.js"
import { answers } from "./output.js"
import { root } from "./root.js"
import { SignalsHeard } from "./signalsHeard.js"

/**
 * The version `--version` prints: the package's.
 *
 * @since 0.1.0
 * @category constants
 */
export const version = packageVersion

/**
 * The root command and every subcommand.
 *
 * @since 0.1.0
 * @category commands
 */
export const command = root.pipe(
  Command.withDescription(
    "Operate sagas from the command line: list, show, decide, resolve, compensate, verify, export."
  ),
  Command.withSubcommands(commands)
)

const cli = Command.run(command, { name: "effect-saga", version })

const textOf = (message: unknown): string => (Array.isArray(message) ? message : [message]).map(partText).join(" ")

/** A part of a log line as text: an object as JSON (a `Redacted` as `<redacted>`), not `[object Object]`. */
const partText = (part: unknown): string =>
  typeof part === "object" && part !== null && !(part instanceof Error)
    ? Inspectable.toStringUnknown(part, 0)
    : String(part)

/**
 * Log lines go to stderr, one line each, so that stdout stays what the command prints. The
 * library's own lines start `effect-saga: `, which this line already does: it is said once.
 */
const stderrLogger = Logger.make(({ logLevel, message }) => {
  const text = textOf(message).replace(/^effect-saga: /, "")
  globalThis.console.error(`effect-saga: ${logLevel.label.toLowerCase()}: ${printable(text)}`)
})

/**
 * `@effect/cli`'s own text (help, usage) goes through a console that makes it plain (`help.ts`);
 * the commands' answers go through the console in context, unchanged.
 */
const withPlainHelp = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.consoleWith((console) =>
    effect.pipe(Effect.withConsole(helpConsole(console)), Effect.locally(answers, Option.some(console)))
  )

/**
 * `@effect/cli` drops a flag's empty value as if the flag were not given: `list --status "$S"` with
 * `S` unset would list every saga. An empty value is refused instead, naming its flag.
 */
const refuseEmptyValues = (args: ReadonlyArray<string>): Effect.Effect<void, UsageError> => {
  const at = args.findIndex((arg, index) => arg === "" && args[index - 1]?.startsWith("--") === true)
  return at === -1
    ? Effect.void
    : Effect.fail(
        new UsageError({ message: `${args[at - 1]} was given an empty value: give one, or leave the flag out` })
      )
}

/**
 * Runs the command line `args` (without the runtime and script) and returns its exit code; a
 * failure prints one line on stderr, and so does an interruption (`Interruption.told`: what the
 * command knows it left), whether the command stopped itself or its fiber was interrupted.
 *
 * @since 0.1.0
 * @category running
 */
export const run = (args: ReadonlyArray<string>): Effect.Effect<Ending["code"], never, CliApp.CliApp.Environment> =>
  Effect.zipRight(refuseEmptyValues(args), cli(["node", "effect-saga", ...args])).pipe(
    withPlainHelp,
    Interruption.told,
    Effect.exit,
    Effect.flatMap((exit) => {
      if (Exit.isSuccess(exit)) return Effect.succeed<Ending["code"]>(0)
      const ending = endingOf(exit.cause)
      return Effect.as(
        ending.line === undefined ? Effect.void : Console.error(`effect-saga: ${ending.line}`),
        ending.code
      )
    }),
    Logger.withMinimumLogLevel(LogLevel.Warning),
    Effect.provide(Logger.replace(Logger.defaultLogger, stderrLogger))
  )

/**
 * Runs `args` (default: the process's) as a Node process: SIGINT and SIGTERM interrupt the
 * command (exit code 130), and the exit code is set without cutting stdout short. Interrupted, the
 * process exits once its output is written, whatever the command cut off still holds open (an
 * undo's timer or socket). A second signal, while the command still finishes what the first let
 * run (`serve`'s requests in flight), exits at once (130), with one line on stderr.
 *
 * @since 0.1.0
 * @category running
 */
export const main = (args: ReadonlyArray<string> = process.argv.slice(2)): void => {
  // Once the command has answered, a signal lets it close what it opened and end with its own code.
  let answered = false
  // Interrupted, the command line says what it left; interrupted before it began, nothing says it.
  let said = false
  const fiber = Effect.runFork(
    Effect.provide(run(args), NodeContext.layer).pipe(
      Effect.locally(Answered.onAnswered, () => {
        answered = true
      }),
      Effect.locally(Interruption.onSaid, () => {
        said = true
      }),
      Effect.withScheduler(new SignalsHeard())
    )
  )
  // Keeps the process alive while the command waits on nothing Node can see.
  const keepAlive = setInterval(() => {}, 2 ** 31 - 1)
  // A reader that stops early (`effect-saga export x | head`) closes the pipe: stop quietly, as
  // Unix tools do; any other failure to write is one line, as every error is.
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") process.stderr.write(`effect-saga: cannot write the output: ${error.message}\n`)
    process.exit(error.code === "EPIPE" ? 0 : 2)
  })
  // One listener for the command's whole life, whose answer changes: added or removed, Node closes
  // the signal's handle whenever none is left, and a signal it had not delivered yet is lost.
  const signals = ["SIGINT", "SIGTERM"] as const
  let onSignal = (): void => {
    // A second signal does not wait for what the first one lets finish (an undo that never returns).
    const closing = answered
    onSignal = () => {
      process.stderr.write(`effect-saga: ${closing ? FORCED_CLOSING : FORCED}\n`)
      process.exit(130)
    }
    if (!closing) fiber.unsafeInterruptAsFork(fiber.id())
  }
  const listener = () => onSignal()
  for (const signal of signals) process.on(signal, listener)
  fiber.addObserver((exit) => {
    clearInterval(keepAlive)
    const code = Exit.isSuccess(exit) ? exit.value : 130
    process.exitCode = code
    // Interrupted while its services were built, before the command line began: nothing ran.
    if (code === 130 && !said && Exit.isInterrupted(exit)) process.stderr.write(`effect-saga: ${NOTHING_RAN}\n`)
    // Done, a signal while the process ends (its output written, its store closed) ends it with the
    // command's own code, not killed by the signal (130 to a shell, as if the command had not run).
    onSignal = () => exitOnceWritten(code)
    // The process exits once the output is out, not when Node's loop runs dry: interrupted, what the
    // command cut off (an undo's timer or socket) would keep it alive; and while Node winds down on
    // its own, it no longer hears signals, and one kills it (143 for SIGTERM) for a hundred
    // milliseconds or more after a large answer.
    exitOnceWritten(code)
  })
}

/** Exits with `code` once what was written to stdout and stderr is out. */
const exitOnceWritten = (code: number): void => {
  process.stdout.write("", () => process.stderr.write("", () => process.exit(code)))
}

/** What an interruption says that came before the command line began. */
const NOTHING_RAN = "interrupted: nothing was written"

/** What a second SIGINT or SIGTERM says as it stops the process at once, the command having answered. */
const FORCED_CLOSING =
  "interrupted again: stopped at once while closing what the command opened, after its answer above: what it printed stands"

/** What a second SIGINT or SIGTERM says as it stops the process at once. */
const FORCED =
  "interrupted again: stopped at once, without waiting for what was under way: an undo still running was cut off with no outcome journaled (its step stays started, its saga compensating under this process's lease until the lease lapses; effect-saga list --status compensating lists it, and effect-saga show with its id says where it stands)"
