/**
 * A server answers while it starts: `NodeHttpServer` listens before the API's handler is attached,
 * and a request in between is answered 503 (ask again), never left without an answer.
 */
import type * as Http from "node:http"
import * as Net from "node:net"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Approval, Journal, Saga } from "../src/index.js"
import * as Server from "../src/internal/http/server.js"
import { startingServer } from "../src/internal/http/startingServer.js"
import * as SagaApi from "../src/SagaApi.js"

/** A server from `startingServer`, listening on a free loopback port, closed with the scope. */
const listening = Effect.acquireRelease(
  Effect.async<Http.Server>((resume) => {
    const server = startingServer()
    server.listen({ host: "127.0.0.1", port: 0 }, () => resume(Effect.succeed(server)))
  }),
  (server) =>
    Effect.async<void>((resume) => {
      server.close(() => resume(Effect.void))
    })
)

const get = (server: Http.Server) =>
  Effect.promise(async () => {
    const response = await fetch(`http://127.0.0.1:${(server.address() as Net.AddressInfo).port}/api/sagas`)
    return { status: response.status, headers: Object.fromEntries(response.headers), body: await response.text() }
  })

describe("a server that is starting", () => {
  it.scopedLive("answers 503 with Retry-After until its handler is attached, then leaves every request to it", () =>
    Effect.gen(function* () {
      const server = yield* listening
      const early = yield* get(server)
      expect(early).toMatchObject({
        status: 503,
        headers: { "retry-after": "1", "content-type": "application/json", "cache-control": "no-store" }
      })
      expect(JSON.parse(early.body)).toEqual({
        _tag: "Unavailable",
        message: "the server is starting: ask again in a moment (nothing was read or written)"
      })

      let handled = 0
      server.on("request", (_request: Http.IncomingMessage, response: Http.ServerResponse) => {
        handled++
        response.end("served")
      })
      expect(server.listenerCount("request")).toBe(1)
      const served = yield* get(server)
      expect(served).toMatchObject({ status: 200, body: "served" })
      expect(handled).toBe(1)
    })
  )

  it.scopedLive(
    "SagaApi's server whose handler is slow to come: a request in between is answered 503, none waits",
    () =>
      Effect.gen(function* () {
        const port = yield* freePort
        // The API's layer takes a second to build, after the server listens.
        const slowApi = Layer.merge(SagaApi.layer, Layer.effectDiscard(Effect.sleep("1 second")))
        const services = Saga.layer.pipe(Layer.provideMerge(Layer.merge(Journal.layerMemory, Approval.layerMemory)))
        yield* Effect.forkScoped(
          Layer.build(
            Server.serve(slowApi, { port, authentication: SagaApi.layerInsecure }).pipe(Layer.provide(services))
          )
        )
        const answers: Array<number | "waited"> = []
        while (!answers.includes(200)) {
          const answer = yield* Effect.promise(() =>
            fetch(`http://127.0.0.1:${port}/api/sagas`, { signal: AbortSignal.timeout(5_000) }).then(
              (response) => response.status,
              (error: Error) => (error.name === "TimeoutError" ? ("waited" as const) : undefined)
            )
          )
          if (answer !== undefined) answers.push(answer)
          yield* Effect.sleep("20 millis")
        }
        expect(answers).not.toContain("waited")
        expect(answers).toContain(503)
      })
  )
})

/** A TCP port no one listens on now. */
const freePort = Effect.async<number>((resume) => {
  const probe = Net.createServer()
  probe.listen(0, "127.0.0.1", () => {
    const { port } = probe.address() as Net.AddressInfo
    probe.close(() => resume(Effect.succeed(port)))
  })
})
