/**
 * The API's handlers: each endpoint is a reading or a command over the app's `Saga`, `Journal` and
 * `Approval` services, its engine errors mapped to status codes.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Layer from "effect/Layer"
import { Api } from "./api.js"
import * as Commands from "./commands.js"
import { asApi } from "./errorStatus.js"
import * as Reading from "./reading.js"

const sagas = HttpApiBuilder.group(Api, "sagas", (handlers) =>
  handlers
    .handle("list", ({ urlParams }) => asApi(Reading.listSagas(urlParams)))
    .handle("get", ({ path }) => asApi(Reading.getSaga(path.sagaId)))
    .handle("verify", ({ path }) => asApi(Reading.verifySaga(path.sagaId)))
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
        .handle("pending", () => asApi(Reading.pendingApprovals))
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
