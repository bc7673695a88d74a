/**
 * Whole-number options read in decimal digits only: `@effect/cli`'s `Options.integer` reads its
 * text with `Number`, which takes `0x10`, `1e2` and ` 50` as 16, 100 and 50 — not what the
 * operator meant to type (the HTTP API refuses them the same way).
 */
import * as HelpDoc from "@effect/cli/HelpDoc"
import * as Options from "@effect/cli/Options"
import * as ValidationError from "@effect/cli/ValidationError"
import * as Effect from "effect/Effect"
import { preview } from "../util/printable.js"

const DECIMAL = /^-?[0-9]+$/

/**
 * `--NAME N`: a whole number written in decimal digits (a leading `-` allowed, so that a range
 * check after it can say why a negative one is refused); anything else is refused, naming the text.
 */
export const decimalInteger = (name: string): Options.Options<number> =>
  Options.text(name).pipe(
    Options.withPseudoName("N"),
    Options.mapEffect((text) => {
      const n = Number(text)
      if (DECIMAL.test(text) && Number.isSafeInteger(n)) return Effect.succeed(n)
      const why = DECIMAL.test(text)
        ? `is past ${Number.MAX_SAFE_INTEGER}, the largest whole number it can be`
        : "is not a whole number in decimal digits"
      return Effect.fail(ValidationError.invalidValue(HelpDoc.p(`--${name} ${preview(text)} ${why}`)))
    })
  )
