/**
 * The HTTP API's definition: its groups, endpoints, errors and authentication middleware. The
 * OpenAPI document, the server's routes and the typed client all come from it.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as HttpApiSecurity from "@effect/platform/HttpApiSecurity"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Schema from "effect/Schema"
import { CurrentPrincipal } from "../../Authority.js"
import { packageVersion } from "../util/packageVersion.js"
import {
  Conflict,
  Forbidden,
  Internal,
  Malformed,
  NotFound,
  Refused,
  TooLarge,
  Unauthenticated,
  Unavailable
} from "./errors.js"
import {
  Answer,
  ApproveBody,
  CompensationAnswer,
  EffectUndo,
  ListParams,
  MAX_LIMIT,
  PendingApproval,
  RejectBody,
  RenewBody,
  ResolveBody,
  SagaDetail,
  SagaPage,
  Seen,
  Verification
} from "./models.js"

/**
 * The bearer-token middleware: provide a layer of it (`layerTokens`, `layerAuthentication`, or
 * your own `Layer.succeed(Authentication, { bearer })`) that maps a token to the principal.
 *
 * @since 0.2.0
 * @category authentication
 */
export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("effect-saga/SagaApi/Authentication", {
  failure: Unauthenticated,
  provides: CurrentPrincipal,
  security: {
    /** The `Authorization: Bearer <token>` of a request: the layer maps it to the caller's principal. */
    bearer: HttpApiSecurity.bearer
  }
}) {}

/**
 * The check of a command's body, which every endpoint goes through once `Authentication` has let
 * the caller in: sent as `application/json`, at most the server's `maxBodyBytes` (413), JSON, and
 * not nested deeper than `MAX_JSON_DEPTH` (400). It runs after the router has matched the endpoint,
 * so it holds for every way of writing the target the router accepts (`/API/…`, `//api/…`).
 *
 * @since 0.3.0
 * @category middleware
 */
export class BodyCheck extends HttpApiMiddleware.Tag<BodyCheck>()("effect-saga/SagaApi/BodyCheck", {
  failure: Schema.Union(TooLarge, Malformed)
}) {}

/**
 * A path segment: the server's router hands it over decoded; the client encodes it, since ids hold
 * `#`, `/` and `:` (`sendWireTransfer:e5db02…#1`).
 */
const Segment = Schema.transform(Schema.String, Schema.String, {
  strict: true,
  decode: (segment) => segment,
  encode: (id) => encodeURIComponent(id)
})

const sagaPath = Schema.Struct({ sagaId: Segment })
const stepPath = Schema.Struct({ sagaId: Segment, stepId: Segment })

/** `GET /api/approvals`'s page, as the OpenAPI document lists it. */
const inboxParameters = [
  {
    name: "offset",
    in: "query",
    required: false,
    description: "sagas with a request waiting to skip (default 0)",
    schema: { type: "integer", minimum: 0 }
  },
  {
    name: "limit",
    in: "query",
    required: false,
    description: `sagas with a request waiting to list (default 50, at most ${MAX_LIMIT})`,
    schema: { type: "integer", minimum: 1, maximum: MAX_LIMIT }
  }
]

/** `GET /api/approvals`'s 200 answer's header, as the OpenAPI document lists it. */
const totalCountHeader = {
  "X-Total-Count": {
    description: "how many sagas have a request waiting, in all (the answer holds one page of them)",
    required: true,
    schema: { type: "integer", minimum: 0 }
  }
}

/** The operation with `X-Total-Count` on its 200 answer (an `Override` would replace every answer). */
const withTotalCount = (operation: Record<string, any>): Record<string, any> => {
  const responses = operation.responses as Record<string, object>
  return { ...operation, responses: { ...responses, 200: { ...responses[200], headers: totalCountHeader } } }
}

// The middleware added last runs first: the caller is authenticated before anything of a body is read.
const sagas = HttpApiGroup.make("sagas")
  .middleware(BodyCheck)
  .middleware(Authentication)
  .add(
    HttpApiEndpoint.get("list", "/api/sagas")
      .setUrlParams(ListParams)
      .addSuccess(SagaPage)
      .annotate(OpenApi.Summary, "Sagas, what needs a person first")
  )
  .add(
    HttpApiEndpoint.get("get", "/api/sagas/:sagaId")
      .setPath(sagaPath)
      .addSuccess(SagaDetail)
      .annotate(OpenApi.Summary, "A saga: row, steps and entries (receipts redacted), with its tamper mark")
  )
  .add(
    HttpApiEndpoint.get("verify", "/api/sagas/:sagaId/verify")
      .setPath(sagaPath)
      .addSuccess(Verification)
      .annotate(OpenApi.Summary, "Re-computes a saga's hash chain against its row")
  )

const approvals = HttpApiGroup.make("approvals")
  .middleware(BodyCheck)
  .middleware(Authentication)
  .add(
    // Its page is read by the handler, not declared (`setUrlParams`): a declared one would make the
    // typed client's `pending()` need an argument, which every caller written so far leaves out.
    HttpApiEndpoint.get("pending", "/api/approvals")
      .addSuccess(Schema.Array(PendingApproval))
      .annotate(OpenApi.Override, { parameters: inboxParameters })
      .annotate(OpenApi.Transform, withTotalCount)
      .annotate(
        OpenApi.Summary,
        "Approval requests waiting for a decision, oldest first, a page of sagas at a time (X-Total-Count: how many sagas have one waiting)"
      )
  )
  .add(
    HttpApiEndpoint.post("approve", "/api/sagas/:sagaId/steps/:stepId/approve")
      .setPath(stepPath)
      .setPayload(ApproveBody)
      .addSuccess(Answer)
      .annotate(OpenApi.Summary, "Approves a step for exactly the input it waits with (journaled APPROVED)")
  )
  .add(
    HttpApiEndpoint.post("reject", "/api/sagas/:sagaId/steps/:stepId/reject")
      .setPath(stepPath)
      .setPayload(RejectBody)
      .addSuccess(CompensationAnswer)
      .annotate(OpenApi.Summary, "Rejects a step (journaled REJECTED); the saga compensates")
  )
  .add(
    HttpApiEndpoint.post("renew", "/api/sagas/:sagaId/steps/:stepId/renew")
      .setPath(stepPath)
      .setPayload(RenewBody)
      .addSuccess(Answer)
      .annotate(OpenApi.Summary, "Gives an approved step that has not run a new expiry")
  )

const operations = HttpApiGroup.make("operations")
  .middleware(BodyCheck)
  .middleware(Authentication)
  .add(
    HttpApiEndpoint.post("resolve", "/api/sagas/:sagaId/steps/:stepId/resolve")
      .setPath(stepPath)
      .setPayload(ResolveBody)
      .addSuccess(Answer)
      .annotate(OpenApi.Summary, "Settles a step whose outcome is unknown as applied or not applied")
  )
  .add(
    HttpApiEndpoint.post("compensate", "/api/sagas/:sagaId/compensate")
      .setPath(sagaPath)
      .setPayload(Seen)
      .addSuccess(CompensationAnswer)
      .annotate(OpenApi.Summary, "Undoes every executed step not undone yet")
  )
  .add(
    HttpApiEndpoint.post("compensateEffect", "/api/sagas/:sagaId/steps/:stepId/compensate-effect")
      .setPath(stepPath)
      .setPayload(Seen)
      .addSuccess(EffectUndo)
      .annotate(OpenApi.Summary, "Undoes exactly one applied step, as a run of its own")
  )

/**
 * The API's definition: groups `sagas`, `approvals` and `operations`, every endpoint behind
 * `Authentication`. `OpenApi.fromApi(SagaApi.Api)` gives its OpenAPI document.
 *
 * @since 0.2.0
 * @category api
 */
export class Api extends HttpApi.make("effect-saga")
  .add(sagas)
  .add(approvals)
  .add(operations)
  .addError(Malformed)
  .addError(Forbidden)
  .addError(NotFound)
  .addError(Conflict)
  .addError(TooLarge)
  .addError(Refused)
  .addError(Unavailable)
  .addError(Internal)
  .annotate(OpenApi.Title, "effect-saga")
  .annotate(OpenApi.Version, packageVersion)
  .annotate(
    OpenApi.Description,
    "Operate sagas from outside: list and inspect them, decide approvals, resolve unknown outcomes, compensate. Every command carries the revision and digest the caller saw."
  ) {}
