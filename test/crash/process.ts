/**
 * A crash-harness child as the parent sees it: started by a runner (./runner.ts), let go and killed
 * with SIGKILL when the parent says so (killed too when the parent's scope closes), its protocol
 * lines collected as they arrive.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process"
import * as readline from "node:readline"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { Message } from "./protocol.js"
import { parse } from "./protocol.js"
import type { Runner } from "./runner.js"
import { root } from "./runner.js"

/** What a child is started with. */
export interface ChildArgs {
  readonly mode: "work" | "recover"
  readonly journal: string
  readonly world: string
  readonly generation: number
  readonly concurrency: number
}

/** A child did not say what it should have: it exited, or took longer than it was given. */
export class ChildFailed extends Data.TaggedError("ChildFailed")<{
  readonly generation: number
  readonly reason: string
  readonly stderr: string
}> {
  override get message(): string {
    return `child ${this.generation} ${this.reason}${this.stderr === "" ? "" : `; its stderr ends with:\n${this.stderr}`}`
  }
}

/** A running child. */
export interface Child {
  /** Lets a child that said `loaded` open the journal and begin. */
  readonly go: Effect.Effect<void>
  /** Every protocol message received so far, in order. */
  readonly messages: ReadonlyArray<Message>
  /** The first message of that kind (at once if it came already); fails if the child exits first or time runs out. */
  readonly waitFor: <K extends Message["crash"]>(
    kind: K,
    timeout: Duration.DurationInput
  ) => Effect.Effect<Extract<Message, { crash: K }>, ChildFailed>
  /** Waits for the child to exit by itself; fails if it exits with an error or time runs out. */
  readonly exit: (timeout: Duration.DurationInput) => Effect.Effect<void, ChildFailed>
  /** SIGKILL, then waits until the process is gone. */
  readonly kill: Effect.Effect<void>
}

/** Keeps the last few kilobytes of a stream, for error messages. */
const tail = (limit: number) => {
  let text = ""
  return {
    add: (chunk: string) => {
      text = (text + chunk).slice(-limit)
    },
    get: () => text.trim()
  }
}

/** Starts a child; it is killed when the scope closes, if it still runs. */
export const spawnChild = (runner: Runner, args: ChildArgs): Effect.Effect<Child, never, Scope.Scope> =>
  Effect.map(
    Effect.acquireRelease(
      Effect.sync(() => {
        const argv = [args.mode, args.journal, args.world, String(args.generation), String(args.concurrency)]
        return spawn(process.execPath, [...runner.nodeArgs, ...argv], { cwd: root })
      }),
      (child) => Effect.sync(() => child.kill("SIGKILL"))
    ),
    (child) => watch(child, args.generation)
  )

const watch = (child: ChildProcessWithoutNullStreams, generation: number): Child => {
  const messages: Array<Message> = []
  const stderr = tail(4000)
  /** How the process ended, once it has; `clean` if it exited with code 0. */
  let ended: { readonly how: string; readonly clean: boolean } | undefined
  const listeners = new Set<() => void>()
  const notify = () => {
    for (const listener of listeners) listener()
  }
  readline.createInterface({ input: child.stdout }).on("line", (line) => {
    const message = parse(line)
    if (message === undefined) return
    messages.push(message)
    notify()
  })
  child.stderr.setEncoding("utf8").on("data", stderr.add)
  // A child that died cannot read its `go`: its end is reported, not the broken pipe.
  child.stdin.on("error", () => {})
  // "close" comes once the process is gone and its stdout has been read to the end.
  child.on("close", (code, signal) => {
    ended = { how: signal === null ? `exited with code ${code}` : `was killed by ${signal}`, clean: code === 0 }
    notify()
  })
  child.on("error", (error) => {
    ended = { how: `could not run: ${error.message}`, clean: false }
    notify()
  })

  const failed = (reason: string) => new ChildFailed({ generation, reason, stderr: stderr.get() })

  /** Waits until `found` gives a value (asked again at every message and at the end); fails if the process ends first. */
  const until = <A>(found: () => A | undefined, what: string, timeout: Duration.DurationInput) =>
    Effect.async<A, ChildFailed>((resume) => {
      const listener = () => {
        const value = found()
        if (value !== undefined) resume(Effect.succeed(value))
        else if (ended !== undefined) resume(Effect.fail(failed(`${ended.how} before ${what}`)))
        else return
        listeners.delete(listener)
      }
      listeners.add(listener)
      listener()
      return Effect.sync(() => listeners.delete(listener))
    }).pipe(
      Effect.timeoutFail({
        duration: timeout,
        onTimeout: () => failed(`took longer than ${Duration.format(timeout)} to reach ${what}`)
      })
    )

  return {
    go: Effect.sync(() => child.stdin.end("go\n")),
    messages,
    waitFor: <K extends Message["crash"]>(kind: K, timeout: Duration.DurationInput) =>
      until(
        () => messages.find((message): message is Extract<Message, { crash: K }> => message.crash === kind),
        `its ${kind} line`,
        timeout
      ),
    exit: (timeout) =>
      Effect.flatMap(
        until(() => ended, "its exit", timeout),
        (end) => (end.clean ? Effect.void : Effect.fail(failed(end.how)))
      ),
    kill: Effect.suspend(() => {
      child.kill("SIGKILL")
      return Effect.asVoid(Effect.either(until(() => ended, "its death", "1 minute")))
    })
  }
}
