/**
 * What the CLI's changing commands say when two are sent at once (two operators, two shells, on
 * PostgreSQL two processes): the one that wrote says what it journaled; the other, which read the
 * saga before that write and found it done after, says "already …: nothing written".
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Option } from "effect"
import { Approval, Authority, Journal, Saga } from "../src/index.js"
import { approveOn } from "../src/internal/cli/commands/approve.js"
import { rejectOn } from "../src/internal/cli/commands/reject.js"
import { renewApprovalOn } from "../src/internal/cli/commands/renewApproval.js"
import { resolveOn } from "../src/internal/cli/commands/resolve.js"
import * as LeaseClock from "../src/internal/cli/leaseClock.js"
import { payout, pingCarrier, reserveFunds, sendWireTransfer, shipping } from "./fixtures/http-saga.js"
import { sentTwiceAtOnce } from "./fixtures/sent-twice.js"

type Services = Saga.Saga | Journal.Journal | Approval.Approval | LeaseClock.LeaseClock

const services = Layer.merge(
  Saga.layer.pipe(
    Layer.tap((context) => Context.get(context, Saga.Saga).register([reserveFunds, sendWireTransfer, pingCarrier]))
  ),
  LeaseClock.layer
).pipe(Layer.provideMerge(Layer.merge(Journal.layerMemory, Approval.layerMemory)))

/** The saga and step a command points at, as `SAGA STEP` without `--revision`/`--digest`. */
const pointedAt = (sagaId: string, state: Saga.StepStatus["state"]) =>
  Effect.map(Saga.status(sagaId), (status) => ({
    saga: sagaId,
    step: status.steps.find((step) => step.state === state)!.stepId,
    revision: Option.none<number>(),
    digest: Option.none<string>()
  }))

const commands: ReadonlyArray<{
  readonly name: string
  readonly wrote: string
  readonly already: string
  readonly prepare: (sagaId: string) => Effect.Effect<Effect.Effect<string, unknown, Services>, unknown, Services>
}> = [
  {
    name: "approve",
    wrote: "journaled APPROVED",
    already: "was already approved by alice",
    prepare: (sagaId) =>
      Effect.gen(function* () {
        yield* Saga.run(sagaId, payout)
        const pointed = yield* pointedAt(sagaId, "awaiting_approval")
        return approveOn(pointed, "alice", undefined)
      })
  },
  {
    name: "renew-approval",
    wrote: "journaled APPROVED",
    already: "was already renewed by alice until 2999-06-01T00:00:00.000Z",
    prepare: (sagaId) =>
      Effect.gen(function* () {
        yield* Saga.run(sagaId, payout)
        const waiting = yield* pointedAt(sagaId, "awaiting_approval")
        yield* Saga.approve(sagaId, waiting.step, { by: "alice", expiresAt: "2999-01-01T00:00:00.000Z" })
        const pointed = yield* pointedAt(sagaId, "approved")
        return renewApprovalOn(pointed, { by: "alice", expires: "2999-06-01T00:00:00.000Z", inputDigest: undefined })
      })
  },
  {
    name: "reject",
    wrote: "journaled REJECTED",
    already: "was already rejected by alice",
    prepare: (sagaId) =>
      Effect.gen(function* () {
        yield* Saga.run(sagaId, payout)
        const pointed = yield* pointedAt(sagaId, "awaiting_approval")
        const rejection = { by: "alice", reason: "unknown payee", registered: new Set(["reserveFunds"]) }
        return Effect.map(rejectOn(pointed, rejection), ({ said }) => said)
      })
  },
  {
    name: "resolve",
    wrote: "journaled FAILED",
    already: "was already resolved as not-applied by alice",
    prepare: (sagaId) =>
      Effect.gen(function* () {
        yield* Saga.run(sagaId, shipping)
        const pointed = yield* pointedAt(sagaId, "unknown")
        return resolveOn(pointed, () => Effect.succeed({ outcome: "not-applied" as const, by: "alice" }), false)
      })
  }
]

describe("the CLI's changing commands, two sent at once", () => {
  for (const command of commands) {
    it.effect(`${command.name}: the one that wrote says so; the other says it was already so, nothing written`, () =>
      Effect.gen(function* () {
        const say = yield* command.prepare(`${command.name}-race`)
        const { first, late } = yield* sentTwiceAtOnce(Authority.withPrincipal(say, { id: "alice" }))
        expect(first).toContain(command.wrote)
        expect(first).not.toContain("nothing written")
        expect(late).toContain(command.already)
        expect(late).toMatch(/: nothing written$/)
      }).pipe(Effect.provide(services))
    )
  }
})
