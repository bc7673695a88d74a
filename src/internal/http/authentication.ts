/**
 * Who is calling: the `Authentication` middleware's implementations. A token is compared with
 * every known token in constant time (SHA-256 of both, `timingSafeEqual`), so neither its value nor
 * which principal holds it leaks through timing.
 */
import * as crypto from "node:crypto"
import * as Config from "effect/Config"
import * as ConfigError from "effect/ConfigError"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import type { Principal } from "../../Authority.js"
import { anonymous } from "../../Authority.js"
import { principalRefusal } from "../util/identifier.js"
import { typeName } from "../util/printable.js"
import { Authentication } from "./api.js"
import { Unauthenticated } from "./errors.js"

const refused = new Unauthenticated({ message: "no valid bearer token: send Authorization: Bearer <token>" })

/**
 * The principal `verify` named, checked as the journal checks who decides: an id that cannot be one
 * (blank, a control character, over 256 bytes) is the server's misconfiguration, not the caller's
 * mistake, so it is a defect (500, logged), never the caller's 400.
 */
const checked = (principal: Principal): Effect.Effect<Principal> => {
  const refusal = typeof principal.id === "string" ? principalRefusal(principal.id) : undefined
  if (typeof principal.id === "string" && refusal === undefined) return Effect.succeed(principal)
  const why =
    refusal === undefined ? `its id is ${typeName(principal.id)}, not text` : `${refusal.identifier}: ${refusal.reason}`
  return Effect.dieMessage(`the authentication layer named a principal that cannot be one: ${why}`)
}

/**
 * The middleware from `verify`, which names the principal a token belongs to (`undefined`: none).
 * An empty token never reaches it. A principal whose id cannot be one, and a `verify` that dies,
 * are defects: the server logs them and answers 500 `Internal`.
 *
 * @since 0.2.0
 * @category authentication
 */
export const layer = (
  verify: (token: Redacted.Redacted<string>) => Effect.Effect<Principal | undefined>
): Layer.Layer<Authentication> =>
  Layer.succeed(
    Authentication,
    Authentication.of({
      bearer: (token) =>
        Redacted.value(token) === ""
          ? Effect.fail(refused)
          : Effect.flatMap(verify(token), (principal) =>
              principal === undefined ? Effect.fail(refused) : checked(principal)
            )
    })
  )

const digestOf = (text: string): Buffer => crypto.createHash("sha256").update(text, "utf8").digest()

interface Holder {
  readonly principal: Principal
  readonly digest: Buffer
}

/** Every holder is compared, matched or not: the time does not depend on which one matches. */
const holderOf = (holders: ReadonlyArray<Holder>, token: Redacted.Redacted<string>): Principal | undefined => {
  const digest = digestOf(Redacted.value(token))
  let found: Principal | undefined
  for (const holder of holders) {
    if (crypto.timingSafeEqual(holder.digest, digest) && found === undefined) found = holder.principal
  }
  return found
}

/**
 * What a bearer token can be: visible ASCII (U+0021–U+007E). Anything else is not sent as it is
 * written (Node reads a header's bytes as Latin-1; `fetch` refuses to send it), so no caller could
 * ever present it.
 */
const bearable = /^[\x21-\x7e]+$/

/**
 * Reads `principal=token` pairs, separated by commas or line breaks (a principal holds no `=` or
 * `,`, and is one the journal can record as deciding: no control character, at most 256 bytes; a
 * token holds no `,` and is visible ASCII, as a bearer header carries it); whitespace around each
 * is ignored. A token given twice is refused,
 * even for one principal: it would authenticate only as the first that holds it.
 *
 * @since 0.2.0
 * @category authentication
 */
export const parseTokens = (text: string): Either.Either<ReadonlyArray<Holder>, string> => {
  const pairs = text
    .split(/[,\n]/)
    .map((pair) => pair.trim())
    .filter((pair) => pair !== "")
  if (pairs.length === 0) return Either.left("no principal=token pair")
  const holders: Array<Holder> = []
  for (const [index, pair] of pairs.entries()) {
    const at = pair.indexOf("=")
    const id = at < 0 ? "" : pair.slice(0, at).trim()
    const token = at < 0 ? "" : pair.slice(at + 1).trim()
    if (id === "" || token === "") return Either.left(`pair ${index + 1} is not principal=token`)
    if (!bearable.test(token)) {
      return Either.left(
        `pair ${index + 1} gives a token no Authorization header can carry: a token is visible ASCII (letters, digits, punctuation; no space, no other character)`
      )
    }
    const refusal = principalRefusal(id)
    if (refusal !== undefined)
      return Either.left(`pair ${index + 1} names a principal that cannot be one: ${refusal.reason}`)
    const digest = digestOf(token)
    const earlier = holders.findIndex((holder) => holder.digest.equals(digest))
    if (earlier >= 0) {
      return Either.left(`pairs ${earlier + 1} and ${index + 1} give the same token: a token names one principal`)
    }
    holders.push({ principal: { id }, digest })
  }
  return Either.right(holders)
}

/**
 * The middleware over `principal=token` pairs read from `config` (default: the redacted
 * `EFFECT_SAGA_API_TOKENS`). Pairs that cannot be read fail the layer with a `ConfigError` that
 * shows none of them.
 *
 * @since 0.2.0
 * @category authentication
 */
export const layerTokens = (
  config: Config.Config<Redacted.Redacted<string>> = Config.redacted("EFFECT_SAGA_API_TOKENS")
): Layer.Layer<Authentication, ConfigError.ConfigError> =>
  Layer.unwrapEffect(
    Effect.gen(function* () {
      const parsed = parseTokens(Redacted.value(yield* config))
      if (Either.isLeft(parsed)) {
        return yield* Effect.fail(ConfigError.InvalidData([], `API tokens: ${parsed.left}`))
      }
      const holders = parsed.right
      return layer((token) => Effect.sync(() => holderOf(holders, token)))
    })
  )

/**
 * The middleware of a server started insecure: every request, with a token or without, is the
 * `anonymous` principal. `SagaApi.serve` allows it only on a loopback address (given as
 * `insecure: true` or as this layer).
 *
 * @since 0.2.0
 * @category authentication
 */
export const layerInsecure: Layer.Layer<Authentication> = Layer.succeed(
  Authentication,
  Authentication.of({ bearer: () => Effect.succeed(anonymous) })
)

/** The service `layerInsecure` builds (the one value `Layer.succeed` holds), found by `SagaApi.serve`. */
const insecureService = Effect.runSync(Effect.provide(Authentication, layerInsecure))

/**
 * Whether `service` is the one `layerInsecure` builds: given through `Layer.orElse`, `Layer.fresh`
 * or any other composition, a server runs without authentication all the same.
 */
export const isInsecure = (service: Context.Tag.Service<Authentication>): boolean => service === insecureService
