/**
 * What a binding's process starts with: its executable, arguments and folder, and an environment of
 * its own — the secrets it names (read with `Config.redacted`) and the variables its `env:NAME`
 * grants pass through, nothing else of the parent's.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type { Binding } from "./format.js"

/** How to start a binding's process. */
export interface Launch {
  readonly executable: string
  readonly args: ReadonlyArray<string>
  readonly cwd: string
}

/** Why a binding's process cannot be started: the path below the binding, and the reason. */
export interface LaunchProblem {
  readonly path: ReadonlyArray<PropertyKey>
  readonly reason: string
}

const isExecutable = (file: string): boolean => {
  try {
    fs.accessSync(file, fs.constants.X_OK)
    return fs.statSync(file).isFile()
  } catch {
    return false
  }
}

/**
 * A command with a `/` is a path (relative to the manifest's folder); a bare name is looked up on the
 * PATH of this process, so that the handler needs no PATH of its own to be found.
 */
const executableOf = (command: string, folder: string): string | undefined => {
  if (command.includes("/")) {
    const file = path.resolve(folder, command)
    return isExecutable(file) ? file : undefined
  }
  for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
    if (dir !== "" && isExecutable(path.join(dir, command))) return path.join(dir, command)
  }
  return undefined
}

/** Why `command` names no executable file: none there, or one without its execute bit. */
const notExecutable = (command: string, folder: string): string => {
  if (!command.includes("/")) return `${JSON.stringify(command)} is not an executable file on the PATH of this process`
  const file = path.resolve(folder, command)
  return fs.statSync(file, { throwIfNoEntry: false })?.isFile() === true
    ? `${JSON.stringify(command)} (${file}) is not executable: chmod +x it`
    : `${JSON.stringify(command)} is not an executable file (relative to ${folder})`
}

/** The executable, arguments and working folder of a binding, relative paths resolved against `folder`. */
export const launchOf = (binding: Binding, folder: string): Either.Either<Launch, LaunchProblem> => {
  const { command } = binding.handler
  const executable = executableOf(command, folder)
  if (executable === undefined)
    return Either.left({ path: ["handler", "command"], reason: notExecutable(command, folder) })
  const cwd = path.resolve(folder, binding.handler.cwd ?? ".")
  if (!fs.statSync(cwd, { throwIfNoEntry: false })?.isDirectory()) {
    return Either.left({ path: ["handler", "cwd"], reason: `${cwd} is not a folder` })
  }
  return Either.right({ executable, args: binding.handler.args, cwd })
}

/** The process's environment, and the secret values in it (to mask wherever its output goes). */
export interface Environment {
  readonly variables: Readonly<Record<string, string>>
  readonly secrets: ReadonlyArray<string>
}

/** The names `env:NAME` grants pass through. */
export const passedThrough = (binding: Binding): ReadonlyArray<string> =>
  binding.grants.flatMap((grant) => (grant.startsWith("env:") ? [grant.slice("env:".length)] : []))

/** Reads the binding's secrets and its passed-through variables from the `ConfigProvider`. */
export const environmentOf = (binding: Binding): Effect.Effect<Environment, ConfigError.ConfigError> =>
  Effect.gen(function* () {
    const variables: Record<string, string> = {}
    for (const name of passedThrough(binding)) {
      const value = yield* Config.option(Config.string(name))
      if (Option.isSome(value)) variables[name] = value.value
    }
    const secrets: Array<string> = []
    for (const name of binding.secrets) {
      const value = Redacted.value(yield* Config.redacted(name))
      variables[name] = value
      if (value !== "") secrets.push(value)
    }
    return { variables, secrets }
  })

/** The first secret of a binding that the `ConfigProvider` does not hold, with its index. */
export const missingSecret = (binding: Binding): Effect.Effect<Option.Option<readonly [number, string]>> =>
  Effect.gen(function* () {
    for (const [index, name] of binding.secrets.entries()) {
      const found = yield* Effect.either(Config.redacted(name))
      if (Either.isLeft(found)) return Option.some([index, name] as const)
    }
    return Option.none()
  })
