/**
 * What the HTTP API's commands answer in `changed`, against a store: whether that command wrote,
 * never whether the saga moved while it ran. The same command sent twice at once writes once; the
 * one that finds the other's write answers `changed: false`.
 *
 * Every test runs sagas of its own, so a store that outlives one test (a PostgreSQL database)
 * still passes.
 */
import * as HttpServer from "@effect/platform/HttpServer"
import { describe, expect, it } from "@effect/vitest"
import { Config, Context, Effect, Layer, Redacted } from "effect"
import type { Approval, Journal } from "../src/index.js"
import { Authority, Saga } from "../src/index.js"
import * as Commands from "../src/internal/http/commands.js"
import type { Answer } from "../src/internal/http/models.js"
import * as SagaApi from "../src/SagaApi.js"
import { payout, pingCarrier, raw, reserveFunds, sendWireTransfer, shipping, tokens } from "./fixtures/http-saga.js"
import { sentTwiceAtOnce } from "./fixtures/sent-twice.js"

type Store = Layer.Layer<Journal.Journal | Approval.Approval, unknown>

export const suite = (name: string, store: () => Store) =>
  describe(`changed says whether the command wrote: ${name}`, () => {
    let sagas = 0
    const fresh = (kind: string) => `${kind}-${++sagas}-${Math.random().toString(36).slice(2, 8)}`

    /** The saga service on the store, with the HTTP world's tools, as an app builds it. */
    const services = () =>
      Saga.layer.pipe(
        Layer.tap((context) => Context.get(context, Saga.Saga).register([reserveFunds, sendWireTransfer, pingCarrier])),
        Layer.provideMerge(store())
      )

    for (const command of commands) {
      it.effect(`${command.name}: of the same command twice at once, the one that wrote says so, the other not`, () =>
        Effect.gen(function* () {
          const sagaId = fresh(command.name)
          const send = yield* command.prepare(sagaId)
          const { first, late } = yield* sentTwiceAtOnce(send)
          expect(first).toMatchObject({ changed: true })
          expect(first.message).not.toContain("nothing written")
          expect(late).toMatchObject({ changed: false, revision: first.revision, digest: first.digest })
          expect(late.message).toContain("already so, nothing written")
        }).pipe(Effect.provide(services()))
      )
    }

    it.scopedLive(
      "an approve retried after the saga ran the step answers changed: false and says the step has run; one from a position the saga never held is 409",
      () =>
        Effect.gen(function* () {
          const sagaId = fresh("approve-retry")
          yield* Saga.run(sagaId, payout)
          const { seen, stepId } = yield* seenAt(sagaId, "awaiting_approval")
          const url = yield* served
          const path = `/api/sagas/${encodeURIComponent(sagaId)}/steps/${encodeURIComponent(stepId)}/approve`
          const approve = (position: Saga.Seen) =>
            raw(url, "POST", path, { as: "alice", body: JSON.stringify(position) })
          const first = yield* approve(seen)
          expect(first.body).toMatchObject({
            changed: true,
            message: "approved by alice; the step runs when the saga is resumed"
          })
          expect((yield* Saga.resume(sagaId, payout))._tag).toBe("Completed")
          const after = yield* Saga.status(sagaId)
          const retried = yield* approve(seen)
          expect(retried.status).toBe(200)
          expect(retried.body).toMatchObject({
            changed: false,
            message: "approved by alice; the step has run: already so, nothing written",
            revision: after.revision,
            digest: after.digest
          })
          const forged = yield* approve({ revision: 999, digest: "zzz" })
          expect(forged.status).toBe(409)
          expect((yield* Saga.status(sagaId)).revision).toBe(after.revision)
        }).pipe(Effect.provide(services()))
    )

    it.scopedLive("ten identical approves sent at once over HTTP: one answers changed, nine do not", () =>
      Effect.gen(function* () {
        const sagaId = fresh("approve-http")
        yield* Saga.run(sagaId, payout)
        const status = yield* Saga.status(sagaId)
        const stepId = status.steps[1]!.stepId
        const url = yield* served
        const body = JSON.stringify({ revision: status.revision, digest: status.digest })
        const path = `/api/sagas/${encodeURIComponent(sagaId)}/steps/${encodeURIComponent(stepId)}/approve`
        const answers = yield* Effect.all(
          Array.from({ length: 10 }, () => raw(url, "POST", path, { as: "alice", body })),
          { concurrency: "unbounded" }
        )
        expect(answers.map((answer) => answer.status)).toEqual(Array.from({ length: 10 }, () => 200))
        const changed = answers.map((answer) => (answer.body as Answer).changed)
        expect(changed.filter((value) => value)).toHaveLength(1)
        const after = yield* Saga.status(sagaId)
        expect(after.revision).toBe(status.revision + 1)
      }).pipe(Effect.provide(services()))
    )
  })

const aliceToken = SagaApi.layerTokens(Config.succeed(Redacted.make(`alice=${tokens.alice}`)))

/** The API over this test's services on 127.0.0.1, for the scope: its base URL. */
const served = Effect.gen(function* () {
  const services = yield* Effect.context<Saga.Saga | Journal.Journal | Approval.Approval>()
  const context = yield* Layer.build(
    SagaApi.serve({ port: 0, authentication: aliceToken }).pipe(Layer.provide(Layer.succeedContext(services)))
  )
  const address = Context.get(context, HttpServer.HttpServer).address
  if (address._tag !== "TcpAddress") return yield* Effect.die("not a TCP address")
  return `http://127.0.0.1:${address.port}`
})

/** A command as the API carries it out for alice. */
type Send = Effect.Effect<Answer, unknown, Saga.Saga | Journal.Journal | Approval.Approval>

const asAlice = <A, E, R>(effect: Effect.Effect<A, E, R>) => Authority.withPrincipal(effect, { id: "alice" })

/** The saga's position and the step in `state`, as a caller would read them before a command. */
const seenAt = (sagaId: string, state: Saga.StepStatus["state"]) =>
  Effect.map(Saga.status(sagaId), (status) => ({
    seen: { revision: status.revision, digest: status.digest },
    stepId: status.steps.find((step) => step.state === state)!.stepId
  }))

/** Each command, and a saga made ready for it: what sending it looks like. */
const commands: ReadonlyArray<{
  readonly name: string
  readonly prepare: (sagaId: string) => Effect.Effect<Send, unknown, Saga.Saga | Journal.Journal | Approval.Approval>
}> = [
  {
    name: "approve",
    prepare: (sagaId) =>
      Effect.gen(function* () {
        yield* Saga.run(sagaId, payout)
        const { seen, stepId } = yield* seenAt(sagaId, "awaiting_approval")
        return asAlice(Commands.approve(sagaId, stepId, seen))
      })
  },
  {
    name: "renew",
    prepare: (sagaId) =>
      Effect.gen(function* () {
        yield* Saga.run(sagaId, payout)
        const waiting = yield* seenAt(sagaId, "awaiting_approval")
        yield* Saga.approve(sagaId, waiting.stepId, { by: "alice", expiresAt: "2999-01-01T00:00:00.000Z" })
        const { seen, stepId } = yield* seenAt(sagaId, "approved")
        return asAlice(Commands.renew(sagaId, stepId, { ...seen, expiresAt: "2999-06-01T00:00:00.000Z" }))
      })
  },
  {
    name: "reject",
    prepare: (sagaId) =>
      Effect.gen(function* () {
        yield* Saga.run(sagaId, payout)
        const { seen, stepId } = yield* seenAt(sagaId, "awaiting_approval")
        return asAlice(Commands.reject({}, sagaId, stepId, { ...seen, reason: "unknown payee" }))
      })
  },
  {
    name: "resolve",
    prepare: (sagaId) =>
      Effect.gen(function* () {
        yield* Saga.run(sagaId, shipping)
        const { seen, stepId } = yield* seenAt(sagaId, "unknown")
        return asAlice(Commands.resolve(sagaId, stepId, { ...seen, outcome: "not-applied" }))
      })
  },
  {
    name: "compensate",
    prepare: (sagaId) =>
      Effect.gen(function* () {
        yield* Saga.run(sagaId, payout)
        const { seen } = yield* seenAt(sagaId, "awaiting_approval")
        return asAlice(Commands.compensate({}, sagaId, seen))
      })
  }
]
