/**
 * The typed client's guard on the ids it puts in a path. A URL takes `.` and `..` (also written
 * `%2E`) as steps of its path, so a request for saga `..` would reach another endpoint and fail
 * to decode its answer; the engine refuses such a saga id anyway. The client refuses them with
 * `Malformed` before anything is sent.
 */
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import { Malformed } from "./errors.js"

/** What a path parameter is named in a message: `sagaId` is the saga id. */
const kindOf = (parameter: string): string =>
  parameter === "sagaId" ? "saga id" : parameter === "stepId" ? "step id" : parameter

/** The refusal of a request whose path holds `.` or `..` as a parameter, if it does. */
export const dotSegmentRefusal = (request: unknown): Malformed | undefined => {
  const path = Predicate.hasProperty(request, "path") ? request.path : undefined
  if (!Predicate.isRecord(path)) return undefined
  for (const [parameter, value] of Object.entries(path)) {
    if (value === "." || value === "..") {
      return new Malformed({
        message: `invalid ${kindOf(parameter)} "${value}": it is "${value}", which a URL takes as a step of its path: the HTTP API could not name it; nothing was sent`
      })
    }
  }
  return undefined
}

type Methods = Record<string, (request: unknown) => Effect.Effect<unknown, unknown, unknown>>

/**
 * `client` with each method's path checked first: a `.` or `..` id fails with `Malformed`, and
 * nothing is sent.
 *
 * @since 0.3.0
 * @category client
 */
export const guarded = <C extends object>(client: C): C =>
  Object.fromEntries(
    Object.entries(client as Record<string, Methods>).map(([group, methods]) => [
      group,
      Object.fromEntries(
        Object.entries(methods).map(([name, method]) => [
          name,
          (request: unknown) => {
            const refused = dotSegmentRefusal(request)
            return refused === undefined ? method(request) : Effect.fail(refused)
          }
        ])
      )
    ])
  ) as C
