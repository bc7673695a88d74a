/**
 * The headers of the API's docs page (`/api/docs`, Swagger UI with its script, styles and the
 * OpenAPI document inline): no other site may frame it (clickjacking), no browser may sniff it as
 * another type, and the page may run only its own inline script and reach only this server.
 */
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"
import { pathOf } from "./target.js"

/** Where the docs page is served. */
export const DOCS_PATH = "/api/docs" as const

/**
 * Swagger UI's page holds its script and styles inline, draws its icons from `data:` URLs and sends
 * "Try it out" requests to this server: all it needs, and nothing from elsewhere.
 */
const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

/** Adds the docs page's headers to the answer of a request for it. */
export const hardened = HttpApp.appendPreResponseHandler((request, response) =>
  Effect.succeed(
    pathOf(request.url) === DOCS_PATH
      ? HttpServerResponse.setHeaders(response, {
          "content-security-policy": CONTENT_SECURITY_POLICY,
          "x-content-type-options": "nosniff"
        })
      : response
  )
)
