/**
 * A Node HTTP server that answers while it starts. `NodeHttpServer` listens when its layer is
 * built, and the API's handler is attached by the layer built after it; Node gives a request no
 * listener takes to nobody, and its client would wait for good. Until the handler is attached,
 * each request is answered 503 `Unavailable` with `Retry-After: 1` and its connection closed.
 */
import * as Http from "node:http"
import { API_HEADERS } from "./docsPage.js"

const startingHeaders = {
  ...API_HEADERS,
  "content-type": "application/json",
  "retry-after": "1",
  connection: "close"
} as const

const startingBody = JSON.stringify({
  _tag: "Unavailable",
  message: "the server is starting: ask again in a moment (nothing was read or written)"
})

/** Answers a request that came before the handler: 503, ask again. */
const answerStarting = (_request: Http.IncomingMessage, response: Http.ServerResponse) => {
  response.writeHead(503, startingHeaders)
  response.end(startingBody)
}

/** A server that answers 503 until a `request` listener of its own is attached, then leaves it every request. */
export const startingServer = (): Http.Server => {
  const server = Http.createServer(answerStarting)
  server.on("newListener", function handlerAttached(event: string | symbol) {
    if (event !== "request") return
    server.off("request", answerStarting)
    server.off("newListener", handlerAttached)
  })
  return server
}
