/**
 * The console's forms, read and decoded as the API reads its bodies: at most `maxBodyBytes` of a
 * form is read (413 past it, as for the API), and each command's fields are decoded with the schema
 * of the endpoint it stands for (`ApproveBody`, `RejectBody`, `ResolveBody`), so a form the API
 * would refuse is refused, before anything is written.
 */
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as Effect from "effect/Effect"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { depthOf, hasMediaType, MAX_JSON_DEPTH, readText } from "../body.js"
import { Malformed, type TooLarge } from "../errors.js"
import { ApproveBody, RejectBody, ResolveBody } from "../models.js"

/**
 * A form's fields by name: a field not sent is `""`.
 *
 * @since 0.2.0
 * @category models
 */
export type Form = (name: string) => string

const notForm = new Malformed({
  message: "a form must be sent with Content-Type: application/x-www-form-urlencoded; nothing was written"
})

/**
 * The form a request posts, at most `max` bytes of it read; a body of another type, or none, is
 * refused before it is read, as the API refuses a body that is not JSON.
 *
 * @since 0.2.0
 * @category forms
 */
export const read = (
  request: HttpServerRequest.HttpServerRequest,
  max: number
): Effect.Effect<Form, TooLarge | Malformed> =>
  // As browsers post a form.
  hasMediaType(request.headers["content-type"], "application/x-www-form-urlencoded")
    ? Effect.map(readText(request, max), (text) => {
        const params = new URLSearchParams(text)
        return (name) => params.get(name) ?? ""
      })
    : Effect.fail(notForm)

/**
 * A field written as a number is one (`1.5` and `-1` too, for the schema to say what is wrong with
 * it); anything else stays text, for the schema to refuse: ` 5`, `0x5`, `1e1`, and `3.0`, which
 * `Number` would read as the integer 3 (the console's own fields never hold them).
 */
const numeric = (text: string): unknown => (/^-?\d+(\.\d*[1-9]\d*)?$/.test(text) ? Number(text) : text)

/** A field a person may leave blank: blank is not given. */
const optional = (text: string): string | undefined => (text.trim() === "" ? undefined : text.trim())

const seen = (form: Form) => ({ revision: numeric(form("revision")), digest: form("digest") })

/** What the schema refuses, in one line: the first reason for each field (the others of an optional one say "undefined"). */
const refusal = (error: ParseResult.ParseError): Malformed => {
  const reasons = new Map<string, string>()
  for (const issue of ParseResult.ArrayFormatter.formatErrorSync(error)) {
    const field = issue.path.join(".")
    if (!reasons.has(field)) reasons.set(field, field === "" ? issue.message : `${field}: ${issue.message}`)
  }
  return new Malformed({ message: `${Array.from(reasons.values()).join("; ")}; nothing was written` })
}

const decode = <A, I>(schema: Schema.Schema<A, I>, fields: Record<string, unknown>): Effect.Effect<A, Malformed> =>
  Effect.mapError(
    Schema.decodeUnknown(schema)(Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined))),
    refusal
  )

/**
 * The approve form as `POST …/approve`'s body: the revision and digest seen, the expiry if one is given.
 *
 * @since 0.2.0
 * @category forms
 */
export const approve = (form: Form): Effect.Effect<typeof ApproveBody.Type, Malformed> =>
  decode(ApproveBody, { ...seen(form), expiresAt: optional(form("expiresAt")) })

/**
 * The reject form as `POST …/reject`'s body: the reason is trimmed, and a blank one is refused.
 *
 * @since 0.2.0
 * @category forms
 */
export const reject = (form: Form): Effect.Effect<typeof RejectBody.Type, Malformed> =>
  decode(RejectBody, { ...seen(form), reason: form("reason").trim() })

/**
 * The resolve form as `POST …/resolve`'s body: the outcome is exactly `applied` or `not-applied`,
 * a result is given only with `applied`, and it is JSON (text is written in quotes) nested at most
 * `MAX_JSON_DEPTH` levels.
 *
 * @since 0.2.0
 * @category forms
 */
export const resolve = (form: Form): Effect.Effect<typeof ResolveBody.Type, Malformed> =>
  Effect.gen(function* () {
    const outcome = form("outcome")
    const result = form("result")
    // A hidden field of the form that says the effect was undone by hand since.
    const undone = form("undone") === "true" ? { undone: true } : {}
    if (outcome !== "applied" && outcome !== "not-applied") {
      return yield* new Malformed({
        message: `the outcome is ${JSON.stringify(outcome)}, neither "applied" nor "not-applied"; nothing was written`
      })
    }
    if (outcome === "not-applied" && form("undone") !== "") {
      return yield* new Malformed({ message: "undone goes with the outcome applied only; nothing was written" })
    }
    if (result.trim() === "") return yield* decode(ResolveBody, { ...seen(form), outcome, ...undone })
    if (outcome === "not-applied") {
      return yield* new Malformed({
        message: "a result is given only with the outcome applied; nothing was written"
      })
    }
    if (depthOf(result) > MAX_JSON_DEPTH) {
      return yield* new Malformed({
        message: `the result nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels; nothing was written`
      })
    }
    const parsed = yield* Effect.try({
      try: (): unknown => JSON.parse(result),
      catch: () =>
        new Malformed({
          message: 'the result is not JSON (text is written in quotes: "parcel-17"); nothing was written'
        })
    })
    return yield* decode(ResolveBody, { ...seen(form), outcome, result: parsed, ...undone })
  })
