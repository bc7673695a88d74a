/**
 * A handler of a manifest binding, in plain Node (no Effect needed): `serve` reads the one request
 * line of `effect-saga-handler-v1` from stdin, calls your function and writes its response as one
 * line on stdout. Imported as `effect-saga/handler`. See docs/manifest.md.
 *
 * ```js
 * import { serve } from "effect-saga/handler"
 *
 * await serve(async (request) => {
 *   const reservation = await reserve(request.input, request.effect.idempotencyKey)
 *   return { outcome: "applied", result: reservation.id, receipt: reservation.token }
 * })
 * ```
 *
 * @since 0.2.0
 * @packageDocumentation
 */

/**
 * The protocol every request names.
 *
 * @since 0.2.0
 * @category protocol
 */
export const PROTOCOL = "effect-saga-handler-v1"

/**
 * What a handler is asked: `execute` the tool, or `compensate` an effect of the tool it is the
 * inverse of (`compensation` then holds the original input, result and receipt: control data, not
 * to be logged). `effect.idempotencyKey` is stable across retries of the same call.
 *
 * @since 0.2.0
 * @category protocol
 */
export interface Request {
  readonly protocol: typeof PROTOCOL
  readonly operation: "execute" | "compensate"
  readonly tool: string
  readonly input: unknown
  readonly effect: { readonly sagaId: string; readonly stepId: string; readonly idempotencyKey: string }
  readonly compensation?:
    | {
        readonly originalInput: unknown
        readonly originalResult: unknown
        readonly originalReceipt?: string | undefined
      }
    | undefined
}

/**
 * What a handler answers: `applied` (with the `result`, and a `receipt` its inverse will need),
 * `failed` (proved not applied), `unknown`, or `partial`; a compensation says `completed` or `partial`.
 *
 * @since 0.2.0
 * @category protocol
 */
export interface Response {
  readonly outcome: "applied" | "failed" | "unknown" | "partial"
  readonly result?: unknown
  readonly receipt?: string | undefined
  readonly message?: string | undefined
  readonly compensation?: "completed" | "partial" | undefined
}

/**
 * Reads the request from stdin, answers it with `handler` and writes the response. A request that
 * is not of the protocol (another `protocol`, or not the shape of a `Request`) is answered `failed`,
 * and `handler` is not called. If `handler` throws, or returns what is not a `Response` (nothing,
 * because a `return` was forgotten; an `outcome` that is not one of the four; a `receipt` or
 * `message` that is not a string; a `compensation` other than `completed` or `partial`), nothing is
 * answered: the process writes why on stderr and exits with code 1 (the library then treats the
 * outcome as unknown). Throw only when you cannot tell whether the effect happened, answer
 * `failed` when you know it did not.
 *
 * @since 0.2.0
 * @category serving
 */
export const serve = async (handler: (request: Request) => Response | Promise<Response>): Promise<void> => {
  const request = parseRequest(await readStdin())
  if (request === undefined) {
    write({ outcome: "failed", message: `not a request of ${PROTOCOL}` })
    return
  }
  try {
    const response: unknown = await handler(request)
    const wrong = whyNotAResponse(response)
    if (wrong === undefined) {
      write(response as Response)
      return
    }
    process.stderr.write(`effect-saga/handler: ${wrong}: nothing is answered, so the outcome is unknown\n`)
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
  }
  process.exitCode = 1
}

/** Why what the function returned is not a `Response` (its fields named, never their values: a receipt is secret). */
const whyNotAResponse = (value: unknown): string | undefined => {
  if (!isObject(value)) {
    const what =
      value === undefined
        ? "nothing (undefined)"
        : value === null
          ? "null"
          : Array.isArray(value)
            ? "an array"
            : `a ${typeof value}`
    return `the function returned ${what}, not a response`
  }
  if (!["applied", "failed", "unknown", "partial"].includes(value.outcome as string)) {
    return "the function's response has no outcome applied, failed, unknown or partial"
  }
  for (const field of ["receipt", "message"] as const) {
    if (value[field] !== undefined && typeof value[field] !== "string") {
      return `the function's response has a ${field} that is not a string`
    }
  }
  if (value.compensation !== undefined && value.compensation !== "completed" && value.compensation !== "partial") {
    return "the function's response has a compensation other than completed or partial"
  }
  return undefined
}

const readStdin = async (): Promise<string> => {
  const chunks: Array<Buffer> = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString("utf8")
}

const parseRequest = (text: string): Request | undefined => {
  try {
    const request: unknown = JSON.parse(text.split("\n")[0] ?? "")
    return isRequest(request) ? request : undefined
  } catch {
    return undefined
  }
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** Whether `value` has the shape of a `Request` (what `Manifest.HandlerRequest` describes), checked by hand: no Effect here. */
const isRequest = (value: unknown): value is Request => {
  if (!isObject(value) || value.protocol !== PROTOCOL) return false
  if (value.operation !== "execute" && value.operation !== "compensate") return false
  if (typeof value.tool !== "string" || !("input" in value)) return false
  const effect = value.effect
  if (!isObject(effect) || [effect.sagaId, effect.stepId, effect.idempotencyKey].some((id) => typeof id !== "string")) {
    return false
  }
  const compensation = value.compensation
  if (compensation === undefined) return true
  return (
    isObject(compensation) &&
    "originalInput" in compensation &&
    "originalResult" in compensation &&
    (compensation.originalReceipt === undefined || typeof compensation.originalReceipt === "string")
  )
}

const write = (response: Response) => {
  process.stdout.write(`${JSON.stringify(response)}\n`)
}
