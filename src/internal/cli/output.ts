/**
 * What commands print: text for people (tables aligned by `../table.ts`), JSON for scripts.
 * Everything goes to stdout; errors and log lines go to stderr.
 *
 * @since 0.1.0
 */
import * as Console from "effect/Console"
import type * as Effect from "effect/Effect"

/**
 * Prints text, followed by a newline.
 *
 * @since 0.1.0
 * @category printing
 */
export const print = (text: string): Effect.Effect<void> => Console.log(text)

/**
 * Prints a value as JSON, two spaces indented.
 *
 * @since 0.1.0
 * @category printing
 */
export const printJson = (value: unknown): Effect.Effect<void> => Console.log(JSON.stringify(value, null, 2))
