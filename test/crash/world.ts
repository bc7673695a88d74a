/**
 * The "world" the crash harness's sagas act on: an append-only NDJSON file, one line per call a
 * provider received, flushed to the disk before the call returns. It is written by the children
 * (through the `World` service) and read back by the audit (`readCalls`), so that what really
 * happened can be compared with what the journal says happened.
 */
import * as fs from "node:fs"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/** A forward call (the step's own) or an undo. */
export type Direction = "forward" | "undo"

/** One call a provider received, as the world file records it. */
export interface Call {
  readonly direction: Direction
  readonly tool: string
  /** The idempotency key the call carried. */
  readonly key: string
  /** Whether the provider applied it: an idempotent provider ignores a key it has applied before. */
  readonly applied: boolean
  /** The child process (its generation) that made the call. */
  readonly generation: number
}

/** What a tool asks of its provider. */
export interface Request {
  readonly direction: Direction
  readonly tool: string
  readonly key: string
  /** Like a real provider with idempotency keys: a key applied before is not applied again. */
  readonly idempotent: boolean
}

/**
 * The providers the sagas' tools call. `call` records the call (and whether it was applied) durably
 * before it returns: once a tool has returned, its effect is in the world whatever happens next.
 */
export class World extends Context.Tag("crash/World")<
  World,
  { readonly call: (request: Request) => Effect.Effect<boolean> }
>() {}

const parseLines = (text: string): Array<Call> =>
  text
    .split("\n")
    // A process killed in the middle of a write may leave a partial last line: it never returned.
    .flatMap((line) => {
      try {
        return line.trim() === "" ? [] : [JSON.parse(line) as Call]
      } catch {
        return []
      }
    })

/** Every call recorded in the world file, in order; none if the file does not exist yet. */
export const readCalls = (file: string): Array<Call> =>
  fs.existsSync(file) ? parseLines(fs.readFileSync(file, "utf8")) : []

/**
 * The world on `file` for the child of `generation`: it remembers the keys applied by earlier
 * children (for idempotent providers) and appends with a flush after every call.
 */
export const layer = (file: string, generation: number): Layer.Layer<World> =>
  Layer.scoped(
    World,
    Effect.gen(function* () {
      const applied = new Set(
        readCalls(file)
          .filter((call) => call.applied)
          .map((call) => `${call.direction} ${call.key}`)
      )
      const fd = yield* Effect.acquireRelease(
        Effect.sync(() => fs.openSync(file, "a")),
        (fd) => Effect.sync(() => fs.closeSync(fd))
      )
      // Synchronous on purpose: the check, the write and the flush cannot interleave with another call.
      const call = (request: Request) =>
        Effect.sync(() => {
          const id = `${request.direction} ${request.key}`
          const apply = !(request.idempotent && applied.has(id))
          const line: Call = {
            direction: request.direction,
            tool: request.tool,
            key: request.key,
            applied: apply,
            generation
          }
          fs.writeSync(fd, `${JSON.stringify(line)}\n`)
          fs.fdatasyncSync(fd)
          if (apply) applied.add(id)
          return apply
        })
      return World.of({ call })
    })
  )
