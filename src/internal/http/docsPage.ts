/**
 * The headers of the API's answers. Every answer under `/api` may not be sniffed as another type
 * nor kept by a cache (a saga's journal, an inbox: what an operator reads must not stay in a proxy's
 * or a browser's cache). The docs page (`/api/docs`, Swagger UI with its script, styles and the
 * OpenAPI document inline) also may not be framed by another site (clickjacking), and may run only
 * its own inline script and reach only this server.
 */
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"
import { isApiTarget, pathOf } from "./target.js"

/** Where the docs page is served. */
export const DOCS_PATH = "/api/docs" as const

/**
 * Swagger UI's page holds its script and styles inline, draws its icons from `data:` URLs and sends
 * "Try it out" requests to this server: all it needs, and nothing from elsewhere.
 */
const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

/** What every answer of the API carries. */
export const API_HEADERS = { "x-content-type-options": "nosniff", "cache-control": "no-store" } as const

/** Adds the API's headers to its answers, and the docs page's own to the answer of a request for it. */
export const hardened = HttpApp.appendPreResponseHandler((request, response) =>
  Effect.succeed(
    pathOf(request.url) === DOCS_PATH
      ? HttpServerResponse.setHeaders(response, { ...API_HEADERS, "content-security-policy": CONTENT_SECURITY_POLICY })
      : isApiTarget(request.url)
        ? HttpServerResponse.setHeaders(response, API_HEADERS)
        : response
  )
)
