/**
 * The text `@effect/cli` prints itself (help, usage, its own errors), made plain where it should
 * be: no colour codes on a stream that is not a terminal, or when `NO_COLOR` is set; and no
 * "A user-defined piece of text." before the description every option and argument has.
 *
 * @since 0.2.0
 */
import type * as Console from "effect/Console"

// biome-ignore lint/suspicious/noControlCharactersInRegex: colour codes start with ESC
const colourCodes = /\u001b\[[0-9;]*m/g

/** The paragraph @effect/cli puts before the description of every text option and argument. */
const textTypeParagraph = /^ *A user-defined piece of text\.\n\n/gm

/**
 * Whether text written to `stream` may be coloured: a terminal, and `NO_COLOR` unset or empty
 * (https://no-color.org).
 *
 * @since 0.2.0
 * @category colour
 */
export const mayColour = (stream: { readonly isTTY?: boolean | undefined }): boolean =>
  stream.isTTY === true && (process.env.NO_COLOR ?? "") === ""

/**
 * `text` without the generic paragraph, and without colour codes unless `colour`.
 *
 * @since 0.2.0
 * @category colour
 */
export const plain = (text: string, colour: boolean): string => {
  const described = text.replace(textTypeParagraph, "")
  return colour ? described : described.replace(colourCodes, "")
}

const plainArgs = (args: ReadonlyArray<unknown>, colour: boolean) =>
  args.map((arg) => (typeof arg === "string" ? plain(arg, colour) : arg))

/**
 * `console`, with what is logged made plain for stdout and what is an error made plain for stderr.
 *
 * @since 0.2.0
 * @category colour
 */
export const helpConsole = (console: Console.Console): Console.Console => ({
  ...console,
  log: (...args) => console.log(...plainArgs(args, mayColour(process.stdout))),
  error: (...args) => console.error(...plainArgs(args, mayColour(process.stderr)))
})
