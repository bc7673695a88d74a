/**
 * What starts a manifest's handler processes: the `CommandExecutor` its `Manifest.layer` was built
 * with, so that a call and an undo start them with that one whatever the caller's context holds.
 */
import * as CommandExecutor from "@effect/platform/CommandExecutor"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

/**
 * The service `Manifest.layer` provides: the `CommandExecutor` it was built with, which every call
 * of a manifest's tool, and every undo, starts its handler process with. A call needs it (provide
 * `Manifest.layer`), so no call can find itself without an executor.
 *
 * @since 0.5.0
 * @category services
 */
export class ManifestProcesses extends Context.Tag("effect-saga/Manifest/ManifestProcesses")<
  ManifestProcesses,
  CommandExecutor.CommandExecutor
>() {}

/**
 * The executor a call starts its process with: `ManifestProcesses`; else a `CommandExecutor` of the
 * context it runs in (an agent's handlers run in the context their Layer was built in, which holds
 * one: `Agent.fromManifest`).
 */
export const executorOf: Effect.Effect<Option.Option<CommandExecutor.CommandExecutor>> = Effect.flatMap(
  Effect.serviceOption(ManifestProcesses),
  (executor) =>
    Option.isSome(executor) ? Effect.succeed(executor) : Effect.serviceOption(CommandExecutor.CommandExecutor)
)
