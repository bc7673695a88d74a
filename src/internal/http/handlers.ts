/**
 * The API's handlers: each endpoint is a reading or a command over the app's `Saga`, `Journal` and
 * `Approval` services, its engine errors mapped to status codes.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { HttpApiDecodeError } from "@effect/platform/HttpApiError"
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { Api } from "./api.js"
import * as Commands from "./commands.js"
import { asApi } from "./errorStatus.js"
import { InboxParams } from "./models.js"
import * as Reading from "./reading.js"

const sagas = HttpApiBuilder.group(Api, "sagas", (handlers) =>
  handlers
    .handle("list", ({ urlParams }) => asApi(Reading.listSagas(urlParams)))
    .handle("get", ({ path }) => asApi(Reading.getSaga(path.sagaId)))
    .handle("verify", ({ path }) => asApi(Reading.verifySaga(path.sagaId)))
)

/** The header of `GET /api/approvals` that counts the sagas with a request waiting (its body stays an array). */
const TOTAL_COUNT_HEADER = "x-total-count"

/** The page `GET /api/approvals` asks for, off its query; one off its schema is 400, as a declared one is. */
const inboxParams = Effect.flatMap(HttpServerRequest.ParsedSearchParams, (search) =>
  Schema.decodeUnknown(InboxParams)(search).pipe(Effect.catchTag("ParseError", HttpApiDecodeError.refailParseError))
)

const pendingWithTotal = (params: InboxParams) =>
  Effect.flatMap(Reading.pendingApprovalsPage(params), (page) =>
    Effect.as(
      HttpApp.appendPreResponseHandler((_, response) =>
        Effect.succeed(HttpServerResponse.setHeader(response, TOTAL_COUNT_HEADER, String(page.sagas)))
      ),
      page.approvals
    )
  )

/**
 * The handlers of every group, commands run with `options`.
 *
 * @since 0.2.0
 * @category layers
 */
export const layer = (options: Commands.CommandOptions) =>
  Layer.mergeAll(
    sagas,
    HttpApiBuilder.group(Api, "approvals", (handlers) =>
      handlers
        .handle("pending", () => Effect.flatMap(inboxParams, (params) => asApi(pendingWithTotal(params))))
        .handle("approve", ({ path, payload }) => asApi(Commands.approve(path.sagaId, path.stepId, payload)))
        .handle("renew", ({ path, payload }) => asApi(Commands.renew(path.sagaId, path.stepId, payload)))
        .handle("reject", ({ path, payload }) => asApi(Commands.reject(options, path.sagaId, path.stepId, payload)))
    ),
    HttpApiBuilder.group(Api, "operations", (handlers) =>
      handlers
        .handle("resolve", ({ path, payload }) => asApi(Commands.resolve(path.sagaId, path.stepId, payload)))
        .handle("compensate", ({ path, payload }) => asApi(Commands.compensate(options, path.sagaId, payload)))
        .handle("compensateEffect", ({ path, payload }) =>
          asApi(Commands.compensateEffect(options, path.sagaId, path.stepId, payload))
        )
    )
  )
