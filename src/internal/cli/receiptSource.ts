/**
 * Where `resolve --applied --receipt SOURCE` reads the receipt the provider gave for a call: never
 * from the command line itself (it would land in the shell's history and in `ps`), but from stdin
 * (`-`) or from an environment variable (`env:NAME`). It is sealed like any receipt, never printed.
 *
 * @since 0.4.0
 */
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { UsageError } from "./failure.js"
import { readStdin, type Stdin } from "./stdin.js"

const usage = (message: string) => new UsageError({ message: `--receipt: ${message}` })

/** Text read whole, without the one line ending a shell or `echo` puts after it. */
const withoutLineEnd = (text: string): string => text.replace(/\r?\n$/, "")

/**
 * The receipt `source` names: `-` reads stdin to its end (`readStdin`: however slowly its writer
 * goes), `env:NAME` the variable `NAME`. Anything
 * else is refused without repeating it (it may be the receipt itself, typed where it does not belong).
 *
 * @since 0.4.0
 * @category parsing
 */
export const read = (source: string, stdin?: Stdin): Effect.Effect<Redacted.Redacted<string>, UsageError> =>
  Effect.suspend(() => {
    if (source === "-") {
      return Effect.flatMap(
        Effect.mapError(readStdin(stdin), (error) => usage(`stdin could not be read (${error.message})`)),
        (read) => {
          const text = withoutLineEnd(read)
          return text === ""
            ? Effect.fail(usage("stdin is empty: pipe the receipt in"))
            : Effect.succeed(Redacted.make(text))
        }
      )
    }
    if (source.startsWith("env:") && source.length > "env:".length) {
      const name = source.slice("env:".length)
      const value = process.env[name]
      return value === undefined || value === ""
        ? Effect.fail(usage(`the environment variable ${name} is not set or empty`))
        : Effect.succeed(Redacted.make(value))
    }
    return Effect.fail(
      usage("say where to read the receipt: - (stdin) or env:NAME (an environment variable), never the receipt itself")
    )
  })
