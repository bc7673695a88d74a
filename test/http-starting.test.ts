/**
 * A server answers while it starts: `NodeHttpServer` listens before the API's handler is attached,
 * and a request in between is answered 503 (ask again), never left without an answer.
 */
import type * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { startingServer } from "../src/internal/http/startingServer.js"

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
    const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/api/sagas`)
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
})
