/**
 * The web console's routes, beside the API on the same server: pages are read through the same
 * readings as the API, and forms post to the same commands, as the principal the token of the
 * sign-in cookie's session names (the `Authentication` layer decides, as it does for the API).
 *
 * NOTE: a form post from another site is refused (its `Sec-Fetch-Site` or `Origin` says so), and the
 * cookie is `SameSite=Strict` and `HttpOnly`: the console cannot be made to act from elsewhere. A
 * form is read as the API reads a body (at most `maxBodyBytes`) and decoded with the API's schemas.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import type { Approval } from "../../../Approval.js"
import * as Authority from "../../../Authority.js"
import type { Journal } from "../../../Journal.js"
import type { Saga } from "../../../Saga.js"
import { Authentication } from "../api.js"
import { DEFAULT_MAX_BODY_BYTES } from "../body.js"
import type { CommandOptions } from "../commands.js"
import * as Commands from "../commands.js"
import { decodeMessage } from "../decodeMessage.js"
import type { EngineError } from "../errorStatus.js"
import { asApi } from "../errorStatus.js"
import type { ApiError, TooLarge } from "../errors.js"
import { Malformed } from "../errors.js"
import { InboxParams, ListParams } from "../models.js"
import * as Reading from "../reading.js"
import * as Flash from "./flash.js"
import type { Form } from "./forms.js"
import * as Forms from "./forms.js"
import type { Notice } from "./html.js"
import { escape, page } from "./html.js"
import * as Pages from "./pages.js"
import * as ReturnTo from "./returnTo.js"
import { SESSION_TTL_MILLIS, Sessions } from "./sessions.js"

const COOKIE = "effect_saga_console"

const session = { httpOnly: true, sameSite: "strict", path: "/" } as const

/** The sign-in sessions of the console being served. */
class ConsoleSessions extends Context.Tag("effect-saga/http/ConsoleSessions")<ConsoleSessions, Sessions>() {}

const headers = {
  "content-security-policy":
    "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "same-origin",
  "cache-control": "no-store"
}

const html = (body: string, status = 200) =>
  HttpServerResponse.text(body, { status, contentType: "text/html; charset=utf-8", headers })

const seeOther = (location: string) => HttpServerResponse.redirect(location, { status: 303, headers })

/** The page parameters a console list was sent, as sent: only those given (`offset`, `limit`). */
const pageQuery = (request: HttpServerRequest.HttpServerRequest): Record<string, string> => {
  const search = new URL(request.url, "http://console").searchParams
  return Object.fromEntries(
    ["offset", "limit"].flatMap((name) => {
      const value = search.get(name)
      return value === null ? [] : [[name, value]]
    })
  )
}

/**
 * The principal the token of the request's session names, checked again now. Without a session (none,
 * one that lapsed or was signed out), no token is given: `layerInsecure` takes that as anonymous,
 * a token layer refuses it. `undefined` sends the person to sign in.
 */
const principalOf = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.gen(function* () {
    const sessions = yield* ConsoleSessions
    const token = sessions.tokenOf(request.cookies[COOKIE], yield* Clock.currentTimeMillis) ?? Redacted.make("")
    const authentication = yield* Authentication
    return yield* authentication.bearer(token).pipe(
      Effect.map((principal): Authority.Principal | undefined => principal),
      Effect.orElseSucceed(() => undefined)
    )
  })

/** The status a page that cannot be shown answers with. */
const statusOf = (error: ApiError): number =>
  ({
    Malformed: 400,
    NotFound: 404,
    Forbidden: 403,
    Unauthenticated: 401,
    Conflict: 409,
    TooLarge: 413,
    Refused: 422,
    Unavailable: 503
  })[error._tag]

/** A page for a signed-in person: the view drawn as them, the notice of the last command shown once. */
const view = <E extends EngineError | ApiError, R>(
  current: "inbox" | "sagas" | "saga",
  draw: (principal: Authority.Principal) => Effect.Effect<{ readonly title: string; readonly body: string }, E, R>
) =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const principal = yield* principalOf(request)
    // Signed in, the person comes back to the page they asked for.
    if (principal === undefined) return seeOther(ReturnTo.loginFor(ReturnTo.askedBy(request.url)))
    const notice = Flash.of(request, request.cookies[COOKIE], yield* Clock.currentTimeMillis)
    const shown = yield* asApi(draw(principal)).pipe(
      Authority.withPrincipal(principal),
      Effect.map(({ title, body }) => html(page({ title, current, notice, principal: principal.id, body }))),
      Effect.catchAll((error) =>
        Effect.succeed(
          html(
            page({
              title: "Not shown",
              current,
              principal: principal.id,
              body: `<h1>Not shown</h1><p>${escape(error.message)}</p>`
            }),
            statusOf(error)
          )
        )
      )
    )
    return notice === undefined ? shown : Flash.clear(shown)
  })

/** What an answer or a refusal is said as, and where the person goes next. */
const noticeFor = (error: ApiError): Notice => {
  switch (error._tag) {
    case "Conflict":
      return {
        kind: "conflict",
        // The reason first: "decide again" would mislead when another person's answer is the reason.
        text: `Refused: ${error.message}. Reload to see where the saga stands now.`
      }
    case "Forbidden":
      return { kind: "forbidden", text: `Not allowed: ${error.message}` }
    default:
      return { kind: "error", text: `Refused: ${error.message}` }
  }
}

/** A redirect to `to` with `notice` for the next page of the request's session. */
const back = (request: HttpServerRequest.HttpServerRequest, now: number, to: string, notice: Notice) =>
  Flash.set(seeOther(to), notice, request.cookies[COOKIE], now)

/** Whether a form post comes from this console: browsers say where a request comes from. */
const sameOrigin = (request: HttpServerRequest.HttpServerRequest): boolean => {
  const site = request.headers["sec-fetch-site"]
  if (site !== undefined && site !== "same-origin" && site !== "none") return false
  const origin = request.headers.origin
  if (origin === undefined || origin === "null") return origin === undefined
  try {
    return new URL(origin).host === request.headers.host
  } catch {
    return false
  }
}

/** The page of a form that could not be read (over the limit, 413): nothing was done. */
const unread = (error: TooLarge | Malformed, current: "inbox" | "login") =>
  html(
    page({
      title: "Refused",
      current,
      body: `<h1>Refused</h1><p>${escape(`The form was not read: ${error.message}. Nothing was done.`)}</p>`
    }),
    statusOf(error)
  )

/**
 * A form post: same origin, signed in, its fields read (at most `max` bytes); `act` answers with a
 * notice and where to go.
 */
const post = <R>(
  max: number,
  act: (form: Form) => Effect.Effect<{ readonly to: string; readonly text: string }, EngineError | ApiError, R>,
  from: (form: Form) => string
) =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    if (!sameOrigin(request))
      return html(page({ title: "Refused", current: "inbox", body: "<h1>Refused: a form from another site</h1>" }), 403)
    const principal = yield* principalOf(request)
    if (principal === undefined) return seeOther("/console/login")
    const read = yield* Effect.either(Forms.read(request, max))
    if (read._tag === "Left") return unread(read.left, "inbox")
    const form = read.right
    const now = yield* Clock.currentTimeMillis
    return yield* asApi(act(form)).pipe(
      Authority.withPrincipal(principal),
      Effect.match({
        onSuccess: ({ to, text }) => back(request, now, to, { kind: "ok", text }),
        onFailure: (error) => back(request, now, from(form), noticeFor(error))
      })
    )
  })

/**
 * A console list's query, decoded as the API decodes its own (`ListParams` for `GET /api/sagas`,
 * `InboxParams` for `GET /api/approvals`): what the API answers 400 (a status that is none, `bogus`;
 * an `offset` of `-1` or `abc`, a `limit` of `0` or `-5`) is refused with the API's message, never
 * read as the first page.
 */
const queryOf = <A, I>(schema: Schema.Schema<A, I>, query: Readonly<Record<string, string>>) =>
  Schema.decodeUnknown(schema)(query).pipe(
    Effect.mapError(
      (error) => new Malformed({ message: decodeMessage(ParseResult.ArrayFormatter.formatErrorSync(error)) })
    )
  )

/** The most sagas a page of `/console/sagas` lists when its query gives no `limit`. */
const SAGAS_PAGE = 500

const sagaPage = (sagaId: string) => `/console/sagas/${encodeURIComponent(sagaId)}`

/** Where a decision's form leads: back to the saga's page it was made on, else the inbox. */
const decisionPage = (form: Form): string => (form("back") === "saga" ? sagaPage(form("sagaId")) : "/console")

const decided =
  (form: Form) => (answer: { readonly sagaId: string; readonly stepId: string | null; readonly message: string }) => ({
    to: decisionPage(form),
    text: `Step ${answer.stepId} of saga ${answer.sagaId}: ${answer.message}.`
  })

/**
 * The console's routes: `/console` (the inbox), `/console/sagas`, `/console/sagas/:sagaId`,
 * `/console/login`, and the form posts `approve`, `reject`, `resolve`, `logout`; `/` leads to the inbox,
 * and `/favicon.ico` is answered 204 (there is no icon).
 *
 * @since 0.2.0
 * @category layers
 */
export const layer = (options: CommandOptions & { readonly maxBodyBytes?: number | undefined }) =>
  HttpApiBuilder.Router.use((router) =>
    Effect.gen(function* () {
      const max = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES
      const context = Context.add(
        yield* Effect.context<Saga | Journal | Approval | Authentication>(),
        ConsoleSessions,
        new Sessions()
      )
      const route = <E>(effect: Effect.Effect<HttpServerResponse.HttpServerResponse, E, any>) =>
        Effect.provide(effect, context) as Effect.Effect<
          HttpServerResponse.HttpServerResponse,
          E,
          HttpServerRequest.HttpServerRequest
        >
      yield* router.get("/", Effect.succeed(seeOther("/console")))
      // Browsers ask every site for its icon: there is none, and saying so keeps their console clean.
      yield* router.get("/favicon.ico", Effect.succeed(HttpServerResponse.empty({ status: 204, headers })))
      yield* router.get(
        "/console",
        route(
          Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
            view("inbox", () =>
              queryOf(InboxParams, pageQuery(request)).pipe(
                Effect.flatMap(Reading.pendingApprovalsPage),
                Effect.map((found) => ({
                  title: "Approval inbox",
                  body: Pages.inbox(
                    found.approvals,
                    { total: found.sagas, offset: found.offset, limit: found.limit },
                    { limit: pageQuery(request).limit ?? "" }
                  )
                }))
              )
            )
          )
        )
      )
      yield* router.get(
        "/console/sagas",
        route(
          Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
            const search = new URL(request.url, "http://console").searchParams
            const status = search.get("status") ?? ""
            const text = search.get("search") ?? ""
            const paging = pageQuery(request)
            // The form's "any" status sends an empty one.
            const query = { ...(status === "" ? {} : { status }), search: text, ...paging }
            return view("sagas", () =>
              queryOf(ListParams, query).pipe(
                Effect.flatMap((filter) => Reading.listSagas({ ...filter, limit: filter.limit ?? SAGAS_PAGE })),
                Effect.map((found) => ({
                  title: "Sagas",
                  body: Pages.sagas(found, { status, search: text, limit: paging.limit ?? "" })
                }))
              )
            )
          })
        )
      )
      yield* router.get(
        "/console/sagas/:sagaId",
        route(
          Effect.flatMap(HttpRouter.params, (params) =>
            view("saga", () =>
              Effect.map(Reading.sagaPage(params.sagaId ?? ""), ({ detail, left, reached, waiting, now }) => ({
                title: `Saga ${detail.saga.sagaId}`,
                body: Pages.saga(detail, now, left, reached, waiting)
              }))
            )
          )
        )
      )
      yield* router.get(
        "/console/login",
        Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
          const next = ReturnTo.pageOf(new URL(request.url, "http://console").searchParams.get("next"))
          return html(page({ title: "Sign in", current: "login", body: Pages.login(next) }))
        })
      )
      yield* router.post(
        "/console/login",
        route(
          Effect.gen(function* () {
            const request = yield* HttpServerRequest.HttpServerRequest
            if (!sameOrigin(request))
              return html(page({ title: "Refused", current: "login", body: "<h1>Refused</h1>" }), 403)
            const read = yield* Effect.either(Forms.read(request, max))
            if (read._tag === "Left") return unread(read.left, "login")
            const token = read.right("token").trim()
            const next = ReturnTo.pageOf(read.right("next"))
            const authentication = yield* Authentication
            const valid = yield* Effect.option(authentication.bearer(Redacted.make(token)))
            if (Option.isNone(valid)) {
              return html(
                page({
                  title: "Sign in",
                  current: "login",
                  notice: { kind: "forbidden", text: "That token is not valid." },
                  body: Pages.login(next)
                }),
                401
              )
            }
            const id = (yield* ConsoleSessions).signIn(Redacted.make(token), yield* Clock.currentTimeMillis)
            return HttpServerResponse.unsafeSetCookie(seeOther(next), COOKIE, id, {
              ...session,
              maxAge: SESSION_TTL_MILLIS
            })
          })
        )
      )
      yield* router.post(
        "/console/logout",
        route(
          Effect.gen(function* () {
            const request = yield* HttpServerRequest.HttpServerRequest
            if (!sameOrigin(request)) {
              return html(
                page({ title: "Refused", current: "login", body: "<h1>Refused: a form from another site</h1>" }),
                403
              )
            }
            const sessions = yield* ConsoleSessions
            sessions.signOut(request.cookies[COOKIE])
            return HttpServerResponse.expireCookie(seeOther("/console/login"), COOKIE, session)
          })
        )
      )
      yield* router.post(
        "/console/approve",
        route(
          post(
            max,
            (form) =>
              Effect.flatMap(Forms.approve(form), (body) =>
                Effect.map(Commands.approve(form("sagaId"), form("stepId"), body), decided(form))
              ),
            decisionPage
          )
        )
      )
      yield* router.post(
        "/console/reject",
        route(
          post(
            max,
            (form) =>
              Effect.flatMap(Forms.reject(form), (body) =>
                Effect.map(Commands.reject(options, form("sagaId"), form("stepId"), body), decided(form))
              ),
            decisionPage
          )
        )
      )
      yield* router.post(
        "/console/resolve",
        route(
          post(
            max,
            (form) =>
              Effect.flatMap(Forms.resolve(form), (body) =>
                Effect.map(Commands.resolve(form("sagaId"), form("stepId"), body), (answer) => ({
                  to: sagaPage(answer.sagaId),
                  text: `Step ${answer.stepId}: ${answer.message}.`
                }))
              ),
            (form) => sagaPage(form("sagaId"))
          )
        )
      )
    })
  )
