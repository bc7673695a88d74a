/**
 * SHA-256 options (`--digest`, `--input-digest`): 64 hexadecimal digits, as `show` and `approvals`
 * print them. Anything else is refused as what it is, a mistyped flag, before the saga is read: a
 * malformed digest would otherwise be told apart from the saga's only as "it moved on".
 */
import * as HelpDoc from "@effect/cli/HelpDoc"
import * as Options from "@effect/cli/Options"
import * as ValidationError from "@effect/cli/ValidationError"
import * as Effect from "effect/Effect"

const SHA256_HEX = /^[0-9a-f]{64}$/

/**
 * `--NAME HASH`: a SHA-256 in hexadecimal (read in lower case); anything else is refused, naming the
 * text and the command that prints the right one (`printedBy`).
 */
export const hexDigest = (name: string, pseudoName: string, printedBy: string): Options.Options<string> =>
  Options.text(name).pipe(
    Options.withPseudoName(pseudoName),
    Options.mapEffect((text) => {
      const digest = text.toLowerCase()
      return SHA256_HEX.test(digest)
        ? Effect.succeed(digest)
        : Effect.fail(
            ValidationError.invalidValue(
              HelpDoc.p(
                `--${name} ${JSON.stringify(text)} is not a digest: give the one ${printedBy} printed (a SHA-256, 64 hexadecimal digits)`
              )
            )
          )
    })
  )
