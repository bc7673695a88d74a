/**
 * What commands print: text for people (tables aligned by `../table.ts`), JSON for scripts.
 * Everything goes to stdout; errors and log lines go to stderr.
 *
 * @since 0.1.0
 */
import type * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Option from "effect/Option"

/**
 * The console a command's answers go to, when it is not the one in context: `app.run` prints
 * `@effect/cli`'s help through a console that makes it plain (`help.ts`), and the answers, byte
 * for byte, through the one it was given.
 *
 * @since 0.2.0
 * @category printing
 */
export const answers: FiberRef.FiberRef<Option.Option<Console.Console>> = FiberRef.unsafeMake(
  Option.none<Console.Console>()
)

const answerConsole: Effect.Effect<Console.Console> = Effect.flatMap(
  FiberRef.get(answers),
  Option.match({ onNone: () => Effect.console, onSome: Effect.succeed })
)

/**
 * Prints text, followed by a newline.
 *
 * @since 0.1.0
 * @category printing
 */
export const print = (text: string): Effect.Effect<void> =>
  Effect.flatMap(answerConsole, (console) => console.log(text))

/**
 * Prints a value as JSON, two spaces indented.
 *
 * @since 0.1.0
 * @category printing
 */
export const printJson = (value: unknown): Effect.Effect<void> => print(JSON.stringify(value, null, 2))
