/**
 * The operator's command line, `effect-saga`: list what is stuck, show a saga as a timeline or a
 * Mermaid diagram, approve, reject and renew approvals, resolve unknown outcomes, compensate,
 * verify hash chains, export, import and prune, on an SQLite journal, through the same `Saga`,
 * `Approval` and `Journal` services code uses. See docs/cli.md.
 *
 * Exit codes: 0 ok; 1 the answer is "something is wrong" (a broken chain, a tampered saga, a saga
 * in `compensation_failed` or `needs_attention`, a compensation that is not clean); 2 a usage or
 * infrastructure error (one line on stderr, nothing written); 130 interrupted (one line on stderr
 * saying what the command knows it left: an undo journaled `COMPENSATION_UNKNOWN`, the revisions it
 * journaled, or that nothing was written).
 *
 * @since 0.1.0
 */
import type * as CliApp from "@effect/cli/CliApp"
import type * as Command from "@effect/cli/Command"
import type * as ConfigError from "effect/ConfigError"
import type * as Effect from "effect/Effect"
import type { RenewError } from "./Approval.js"
import type { DeclarationError } from "./Compensable.js"
import * as app from "./internal/cli/app.js"
import type { SomethingWrong, UsageError } from "./internal/cli/failure.js"
import type { KeyError } from "./Keys.js"
import type { CommandError as SagaCommandError } from "./Saga.js"
import type { InsecureServer, InvalidApiOptions } from "./SagaApi.js"
import type { EffectNotFound } from "./SagaError.js"

export { SomethingWrong, UsageError } from "./internal/cli/failure.js"

/**
 * How a run of the CLI ends: 0 ok, 1 something is wrong, 2 usage or infrastructure error,
 * 130 interrupted.
 *
 * @since 0.1.0
 * @category models
 */
export type ExitCode = 0 | 1 | 2 | 130

/**
 * What a command of `effect-saga` fails with (`Cli.run` turns each into its exit code and line):
 * `UsageError` and `SomethingWrong` of the CLI itself, an operator's command's `Saga.CommandError`,
 * `RenewError`, `EffectNotFound`, a `--register` module's `DeclarationError`, a journal key's
 * `KeyError` or `ConfigError`, and `serve`'s `InvalidApiOptions` and `InsecureServer`.
 *
 * @since 0.5.0
 * @category errors
 */
export type CommandError =
  | UsageError
  | SomethingWrong
  | SagaCommandError
  | RenewError
  | EffectNotFound
  | DeclarationError
  | KeyError
  | ConfigError.ConfigError
  | InvalidApiOptions
  | InsecureServer

/**
 * The `effect-saga` command and its subcommands, for embedding in a CLI of your own. It needs no
 * service of yours (each command opens the store `--db` names) and fails with `CommandError`.
 *
 * @example
 * ```ts
 * import * as Command from "@effect/cli/Command"
 * import { NodeContext, NodeRuntime } from "@effect/platform-node"
 * import { Effect } from "effect"
 * import * as Cli from "effect-saga/cli"
 *
 * const app = Command.make("app").pipe(Command.withSubcommands([Cli.command]))
 *
 * Command.run(app, { name: "app", version: "1.0.0" })(process.argv).pipe(
 *   Effect.provide(NodeContext.layer),
 *   NodeRuntime.runMain
 * )
 * ```
 *
 * @since 0.1.0
 * @category commands
 */
export const command: Command.Command<
  "effect-saga",
  never,
  CommandError,
  Effect.Effect.Success<typeof app.command>
> = app.command

/**
 * Runs a command line (the arguments after `effect-saga`) and returns its exit code. Output goes to
 * stdout, one line per error to stderr; it never fails.
 *
 * @example
 * ```ts
 * import { NodeContext } from "@effect/platform-node"
 * import { Effect } from "effect"
 * import * as Cli from "effect-saga/cli"
 *
 * const code = Cli.run(["list", "--db", "sagas.db", "--json"]).pipe(Effect.provide(NodeContext.layer))
 * ```
 *
 * @since 0.1.0
 * @category running
 */
export const run: (args: ReadonlyArray<string>) => Effect.Effect<ExitCode, never, CliApp.CliApp.Environment> = app.run

/**
 * Runs the process's command line (or `args`) as `bin/effect-saga.js` does: SIGINT and SIGTERM
 * interrupt the command, which then prints one line on stderr (`effect-saga: interrupted: …`, what
 * it left), and `process.exitCode` is set when it ends. Interrupted, the process exits (130) once
 * that line is written, whatever the command cut off still holds open (an undo's timer or socket).
 *
 * @since 0.1.0
 * @category running
 */
export const main: (args?: ReadonlyArray<string>) => void = app.main
