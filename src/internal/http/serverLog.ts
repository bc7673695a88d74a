/**
 * What the server logs when it answers 5xx, so that an operator can see why: the request's method
 * and path (never its body, its headers, its token or a receipt) and the cause, at Error, through
 * Effect's logger (the CLI's writes it to stderr).
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { cut } from "../util/printable.js"

/** The most characters of a request's path a log line shows. */
const MAX_PATH = 200

/** The most characters of a defect's text a log line shows. */
const MAX_DEFECT = 1000

/** A request's path, without its query (a search term is the caller's, and may be long). */
const pathOf = (url: string): string => cut(url.split("?")[0]!, MAX_PATH)

/** Logs at Error that the request in context (if any) was answered `status`, and `why`. */
export const logAnswer = (status: 500 | 503, why: string): Effect.Effect<void> =>
  Effect.flatMap(Effect.serviceOption(HttpServerRequest.HttpServerRequest), (request) =>
    Effect.logError(
      `effect-saga: ${Option.match(request, {
        onNone: () => "a request",
        onSome: (current) => `${current.method} ${pathOf(current.url)}`
      })} answered ${status}: ${why}`
    )
  )

/** What a defect says: an error's name and message (never its stack), or the value as text. */
export const defectText = (defect: unknown): string =>
  cut(
    defect instanceof Error
      ? `${defect.name}: ${defect.message}`
      : typeof defect === "string"
        ? defect
        : String(defect),
    MAX_DEFECT
  )
