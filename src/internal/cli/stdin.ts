/**
 * Reading stdin to its end, for `import -` and `resolve --receipt -`.
 *
 * @since 0.5.0
 */
import { text } from "node:stream/consumers"
import * as Effect from "effect/Effect"

/** What `readStdin` reads: `process.stdin`, or a stream standing in for it. */
export type Stdin = NodeJS.ReadableStream & { destroy(): unknown }

/**
 * Stdin's text to its end, read as a stream: a pipe whose writer is slower than this process
 * (`vault read … | effect-saga resolve … --receipt -`) is empty for a while, and a synchronous read
 * of a non-blocking pipe fails then (`EAGAIN`). Interrupted (SIGINT, SIGTERM), the read stops and
 * stdin is destroyed: a stdin still open (a terminal, a writer that stalls) would otherwise keep
 * the process alive after it said it was interrupted.
 *
 * @since 0.5.0
 * @category reading
 */
export const readStdin = (stdin: Stdin = process.stdin): Effect.Effect<string, Error> =>
  Effect.tryPromise({
    try: (signal) => {
      signal.addEventListener("abort", () => stdin.destroy(), { once: true })
      return text(stdin)
    },
    catch: (error) => (error instanceof Error ? error : new Error(String(error)))
  })
