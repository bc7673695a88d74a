/**
 * One call of a handler process: the request line written to its stdin, one answer line read from
 * its stdout, within `timeout_ms` and `max_payload_bytes`; past either, its process group is killed.
 * Whatever the call left running in its process group is killed when the call is over.
 */
import * as Command from "@effect/platform/Command"
import type * as CommandExecutor from "@effect/platform/CommandExecutor"
import type { PlatformError } from "@effect/platform/Error"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { noneAfter } from "../util/deadline.js"
import { masked, maskedCut } from "../util/masking.js"
import { firstDuplicateKey, nestingOf, topLevelStrings } from "./duplicateKeys.js"
import type { Environment, Launch } from "./environment.js"
import { jsonPath } from "./errors.js"
import { HandlerResponse } from "./format.js"

/** The most bytes of a handler's stderr that reach the log. */
export const STDERR_LOG_BYTES = 4096

/** What one handler call needs. */
export interface Call {
  /** `binding X (execute)`: how messages name the call. */
  readonly label: string
  readonly launch: Launch
  readonly environment: Environment
  /** The request, one JSON line without its newline. */
  readonly request: string
  readonly timeoutMs: number
  readonly maxBytes: number
  /**
   * Values never to show (the secrets, an inverse's receipt): replaced in stderr, with the receipt
   * the handler answers with (`answeredMask`).
   */
  readonly mask: ReadonlyArray<string>
}

/**
 * How a call ended. `receipts` are the texts a `Malformed` or `Unknown` answer's line gave as its
 * receipt, if it gave any (every one, when its line repeats the key): not trusted, but masked all
 * the same.
 */
export type Answer =
  | { readonly _tag: "Answered"; readonly response: HandlerResponse }
  /** The handler exited 0 without one line of the protocol, and its line claims no outcome: nothing the library can trust. */
  | { readonly _tag: "Malformed"; readonly reason: string; readonly receipts?: ReadonlyArray<string> | undefined }
  /**
   * It may or may not have acted: killed past a limit, exited non-zero without an answer, or it
   * named an outcome in a line that does not decode, or wrote a line that repeats a key.
   */
  | { readonly _tag: "Unknown"; readonly reason: string; readonly receipts?: ReadonlyArray<string> | undefined }
  /** No process was started. */
  | { readonly _tag: "NotStarted"; readonly reason: string }

export const run = (call: Call): Effect.Effect<Answer, never, CommandExecutor.CommandExecutor> =>
  Effect.scoped(
    Effect.gen(function* () {
      const line = new TextEncoder().encode(`${call.request}\n`)
      if (line.byteLength > call.maxBytes) {
        return notStarted(`its request is ${line.byteLength} bytes, over max_payload_bytes ${call.maxBytes}`)
      }
      const started = yield* Effect.either(Command.start(commandOf(call)))
      if (Either.isLeft(started)) return notStarted(`it cannot be started: ${masked(started.left.message, call.mask)}`)
      const handler = started.right
      yield* Effect.forkScoped(Effect.ignore(Stream.run(Stream.make(line), handler.stdin)))
      const stderr = yield* Ref.make<Stderr>({ chunks: [], bytes: 0 })
      const stderrDone = yield* Effect.forkScoped(collectStderr(handler.stderr, stderr))
      const finished = yield* noneAfter(
        Effect.flatMap(readAnswer(handler.stdout, call.maxBytes), (output) =>
          output.over
            ? Effect.succeed({ output, exit: Either.right<number>(-1) as Either.Either<number, PlatformError> })
            : Effect.map(Effect.either(handler.exitCode), (exit) => ({ output, exit }))
        ),
        Duration.millis(call.timeoutMs)
      )
      // The call is over: its process group goes, whatever it left running.
      yield* Effect.ignore(handler.kill("SIGKILL"))
      yield* Effect.ignore(Effect.timeoutOption(Fiber.join(stderrDone), Duration.seconds(1)))
      const answer = answerOfCall(call, finished)
      // Logged once the answer is known, so that the receipt it holds is masked too.
      yield* logStderr(call, yield* Ref.get(stderr), answeredMask(call.mask, answer))
      return answer
    })
  )

/**
 * `mask`, and the receipt of the answer, if it has one (or its line gave one as text, in an answer
 * not trusted): a handler that logs its own receipt does not show it.
 */
export const answeredMask = (mask: ReadonlyArray<string>, answer: Answer): ReadonlyArray<string> => {
  if (answer._tag === "Answered") {
    return answer.response.receipt === undefined ? mask : [...mask, answer.response.receipt]
  }
  return answer._tag === "NotStarted" || answer.receipts === undefined ? mask : [...mask, ...answer.receipts]
}

const answerOfCall = (
  call: Call,
  finished: Option.Option<{
    readonly output: { readonly over: boolean; readonly text: string; readonly utf8: boolean }
    readonly exit: Either.Either<number, PlatformError>
  }>
): Answer => {
  if (Option.isNone(finished)) {
    return unknown(`no answer within timeout_ms ${call.timeoutMs}: its process group was killed`)
  }
  const { output, exit } = finished.value
  if (output.over) return unknown(`its output passed max_payload_bytes ${call.maxBytes}: its process group was killed`)
  const exited = Either.match(exit, {
    onLeft: (error) => {
      const signal = signalOf(error)
      return signal === undefined
        ? `it ended without an exit code (${masked(error.message, call.mask)})`
        : `it was ended by signal ${signal}`
    },
    onRight: (code) => (code === 0 ? undefined : `it exited with code ${code}`)
  })
  return answerOf(output, exited, call.mask)
}

/**
 * The signal that ended the process, as `@effect/platform`'s Node executor words it (`Process
 * interrupted due to receipt of signal: SIGKILL`), if that is why it has no exit code.
 */
const signalOf = (error: PlatformError): string | undefined =>
  /receipt of signal: (SIG[A-Z0-9]+)$/.exec(error.message)?.[1]

const notStarted = (reason: string): Answer => ({ _tag: "NotStarted", reason })
const unknown = (reason: string): Answer => ({ _tag: "Unknown", reason })

const commandOf = (call: Call): Command.Command =>
  Command.make(call.launch.executable, ...call.launch.args).pipe(
    Command.workingDirectory(call.launch.cwd),
    // Without `extendEnv: false`, Command adds the parent's whole environment.
    Command.env(call.environment.variables, { extendEnv: false })
  )

/** The handler's stdout, up to `maxBytes` (`over` past them: reading stops there). */
const readAnswer = (stdout: Stream.Stream<Uint8Array, unknown>, maxBytes: number) =>
  Stream.runFoldWhile(
    stdout,
    { chunks: [] as Array<Uint8Array>, bytes: 0, over: false },
    (state) => !state.over,
    (state, chunk) => {
      state.chunks.push(chunk)
      const bytes = state.bytes + chunk.byteLength
      return { chunks: state.chunks, bytes, over: bytes > maxBytes }
    }
  ).pipe(
    Effect.map((state) => ({ over: state.over, ...decodedOutput(Buffer.concat(state.chunks)) })),
    Effect.orElseSucceed(() => ({ over: false, text: "", utf8: true }))
  )

const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })

/**
 * A handler's stdout as text, and whether it was UTF-8: bytes that are not are read with `�` in
 * their place (for the reason's words), and no answer is taken from them.
 */
const decodedOutput = (bytes: Buffer): { readonly text: string; readonly utf8: boolean } => {
  try {
    return { text: strictUtf8.decode(bytes), utf8: true }
  } catch {
    return { text: bytes.toString("utf8"), utf8: false }
  }
}

/** The first `STDERR_LOG_BYTES` of a handler's stderr, as bytes, and how many it wrote. */
interface Stderr {
  readonly chunks: ReadonlyArray<Uint8Array>
  readonly bytes: number
}

/**
 * Keeps the first `STDERR_LOG_BYTES` of stderr as bytes, and counts the rest: decoded only once
 * whole, a character (of a secret, say) written in two parts is still one character.
 */
const collectStderr = (stderr: Stream.Stream<Uint8Array, unknown>, into: Ref.Ref<Stderr>) =>
  Effect.ignore(
    Stream.runForEach(stderr, (chunk) =>
      Ref.update(into, (state) => ({
        chunks:
          state.bytes >= STDERR_LOG_BYTES
            ? state.chunks
            : [...state.chunks, chunk.slice(0, STDERR_LOG_BYTES - state.bytes)],
        bytes: state.bytes + chunk.byteLength
      }))
    )
  )

/**
 * The length of `bytes` without the first bytes of a UTF-8 character they end inside: decoded, those
 * would be `�`, and the start of a secret before them would not be seen as one.
 */
const utf8Boundary = (bytes: Uint8Array): number => {
  for (let at = bytes.length - 1; at >= Math.max(0, bytes.length - 4); at--) {
    const byte = bytes[at]!
    if ((byte & 0xc0) === 0x80) continue
    const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1
    return at + length > bytes.length ? at : bytes.length
  }
  return bytes.length
}

const logStderr = (call: Call, stderr: Stderr, mask: ReadonlyArray<string>) => {
  if (stderr.bytes === 0) return Effect.void
  const kept = Buffer.concat(stderr.chunks)
  if (stderr.bytes <= STDERR_LOG_BYTES) {
    return Effect.logDebug(`effect-saga: ${call.label} wrote to stderr: ${masked(kept.toString("utf8"), mask)}`)
  }
  const whole = kept.subarray(0, utf8Boundary(kept))
  const cut = ` … (${stderr.bytes - whole.byteLength} more bytes cut)`
  const shown = maskedCut(whole.toString("utf8"), mask)
  return Effect.logDebug(`effect-saga: ${call.label} wrote to stderr: ${shown}${cut}`)
}

const decodeResponse = Schema.decodeUnknownEither(HandlerResponse)

/**
 * How deep an answer's line may nest to be checked for repeated keys (the check recurses); a deeper
 * line is not trusted. `JSON.stringify` could not journal a result much deeper anyway.
 */
export const MAX_ANSWER_NESTING = 1000

/** The outcomes a line may claim: an answer that claims one and does not decode is unknown. */
const OUTCOMES: ReadonlyArray<unknown> = ["applied", "failed", "unknown", "partial"]

/** Why a line is no answer: `claimed` when it cannot be trusted though it may tell of an effect (`Unknown`). */
interface NotAnAnswer {
  readonly reason: string
  readonly claimed: boolean
  readonly receipts?: ReadonlyArray<string> | undefined
}

/**
 * One line of the protocol is an answer, whatever the exit code. Without one, a handler that exited
 * 0 answered wrongly (`Malformed`), unless its line claims an outcome or repeats a key: then it
 * may have acted, as one that did not exit 0 may have before it died (`Unknown`).
 */
const answerOf = (
  { text, utf8 }: { readonly text: string; readonly utf8: boolean },
  exited: string | undefined,
  mask: ReadonlyArray<string>
): Answer => {
  const reason = utf8 ? whyNotAnAnswer(text, mask) : notUtf8(text, mask)
  if (Either.isRight(reason)) return { _tag: "Answered", response: reason.right }
  const { receipts } = reason.left
  if (exited !== undefined) {
    return {
      _tag: "Unknown",
      reason:
        text.trim() === "" ? `${exited} and no answer` : `${exited}; its output was no answer (${reason.left.reason})`,
      receipts
    }
  }
  return { _tag: reason.left.claimed ? "Unknown" : "Malformed", reason: reason.left.reason, receipts }
}

/**
 * Why a line is no answer, in the library's words: what it quotes of the line (a key's path) is
 * masked (`mask`, and the receipt the line gives as text), the words around it are not.
 */
const whyNotAnAnswer = (text: string, mask: ReadonlyArray<string>): Either.Either<HandlerResponse, NotAnAnswer> => {
  // A byte order mark before the line and blank lines around it are no second line.
  const body = text.replace(/^\uFEFF/, "").trim()
  const malformed = (reason: string) => Either.left({ reason, claimed: false })
  if (body.trim() === "") return malformed("it wrote nothing")
  if (body.includes("\n")) return severalLines(body.split(/\r?\n/))
  let json: unknown
  try {
    json = JSON.parse(body)
  } catch {
    return malformed("its line is not JSON")
  }
  const receipts = receiptsOf(json)
  if (nestingOf(body) > MAX_ANSWER_NESTING) {
    return Either.left({
      reason: `its line nests deeper than ${MAX_ANSWER_NESTING} levels: it is not trusted, whatever it says`,
      claimed: true,
      receipts
    })
  }
  const repeated = firstDuplicateKey(body)
  if (repeated !== undefined) {
    // `JSON.parse` kept the last of a repeated receipt: every one the line gives is masked.
    const given = topLevelStrings(body, "receipt")
    return Either.left({
      reason: `its line repeats the key at ${shortPath(repeated, [...mask, ...given])} (JSON keeps only the last): it is not trusted, whatever it says`,
      claimed: true,
      receipts: given
    })
  }
  const decoded = decodeResponse(json)
  if (Either.isRight(decoded)) return Either.right(decoded.right)
  const outcome = outcomeOf(json)
  if (OUTCOMES.includes(outcome)) {
    return Either.left({
      reason: `it answered ${outcome}, but ${misfitsOf(json as Record<string, unknown>)}: it is not trusted`,
      claimed: true,
      receipts
    })
  }
  return malformed("its line is not a response of effect-saga-handler-v1")
}

/**
 * Output that is not UTF-8 is no answer: read with `�` in its place, a result or receipt would not
 * be the one the handler gave. If it would have been an answer, or names an outcome, the handler may
 * have acted: not trusted, whatever it says (`claimed`).
 */
const notUtf8 = (text: string, mask: ReadonlyArray<string>): Either.Either<never, NotAnAnswer> => {
  const read = whyNotAnAnswer(text, mask)
  const claimed = Either.isRight(read) || read.left.claimed
  return Either.left({
    reason: `its output is not UTF-8${claimed ? ": it is not trusted, whatever it says" : ""}`,
    claimed,
    receipts: Either.isRight(read) ? receiptsOf(read.right) : read.left.receipts
  })
}

/**
 * More than one line is no answer. If one of them names an outcome (a log line printed before the
 * answer, say), the handler may have acted: not trusted, whatever it says (`claimed`).
 */
const severalLines = (lines: ReadonlyArray<string>): Either.Either<never, NotAnAnswer> => {
  const claiming = lines.map(parsedOrUndefined).find((json) => OUTCOMES.includes(outcomeOf(json)))
  return Either.left(
    claiming === undefined
      ? { reason: "it wrote more than one line", claimed: false }
      : {
          reason: "it wrote more than one line, one of them naming an outcome: it is not trusted, whatever it says",
          claimed: true,
          receipts: receiptsOf(claiming)
        }
  )
}

const parsedOrUndefined = (line: string): unknown => {
  try {
    return JSON.parse(line)
  } catch {
    return undefined
  }
}

const outcomeOf = (json: unknown): unknown =>
  typeof json === "object" && json !== null ? (json as { outcome?: unknown }).outcome : undefined

/** The receipt a line gives as text, if any (one: `JSON.parse` keeps the last of a repeated key). */
const receiptsOf = (json: unknown): ReadonlyArray<string> | undefined => {
  const receipt = typeof json === "object" && json !== null ? (json as { receipt?: unknown }).receipt : undefined
  return typeof receipt === "string" ? [receipt] : undefined
}

/** What of an answer that names an outcome does not fit the protocol: its fields, not their values (a value may be a secret). */
const misfitsOf = (json: Record<string, unknown>): string => {
  const misfits: Array<string> = []
  for (const field of ["receipt", "message"] as const) {
    if (json[field] !== undefined && typeof json[field] !== "string") misfits.push(`its ${field} is not a string`)
  }
  const compensation = json.compensation
  if (compensation !== undefined && compensation !== "completed" && compensation !== "partial") {
    misfits.push("its compensation is neither completed nor partial")
  }
  return misfits.length === 0 ? "its line is not a response of effect-saga-handler-v1" : misfits.join(", ")
}

/** A JSON path for a message, its keys masked (the handler wrote them), at most 100 characters of it. */
const shortPath = (segments: ReadonlyArray<string | number>, mask: ReadonlyArray<string>): string => {
  const path = Array.from(jsonPath(segments.map((key) => (typeof key === "string" ? masked(key, mask) : key))))
  return path.length <= 100 ? path.join("") : `${path.slice(0, 100).join("")}…`
}
