/**
 * What a command interrupted away from any undo says (exit 130): one line on stderr, and only what
 * it knows it wrote. The CLI runs in this process on an SQLite file; its answer never gets printed
 * (the console it prints to never returns), and the test interrupts it there, as SIGINT would.
 * Interruptions during an undo are in test/cli.test.ts, sent as real signals to a subprocess.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { type Console, Deferred, Effect, Fiber, Layer } from "effect"
import * as Cli from "../src/Cli.js"
import { type Journal, Saga, SqlStore } from "../src/index.js"
import { Checkout } from "./fixtures/cli-tools.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-cli-interrupted-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

let files = 0
const freshFile = () => path.join(dir, `${++files}.db`)

describe("effect-saga interrupted where no undo runs", { timeout: 60_000 }, () => {
  it.scoped("a read says that nothing was written", () =>
    Effect.gen(function* () {
      const db = freshFile()
      yield* onFile(db, Saga.start(Checkout, "o-1", { orderId: "o-1", amount: 4200 }))
      const stopped = yield* interruptedAtItsAnswer("show", "o-1", "--db", db)
      expect(stopped).toEqual(["effect-saga: interrupted: nothing was written (the command only reads)"])
    })
  )

  it.scoped("a changing command says which revisions it journaled before it stopped, and nothing more", () =>
    Effect.gen(function* () {
      const db = freshFile()
      yield* onFile(db, Saga.start(Checkout, "o-1", { orderId: "o-1", amount: 4200 }))
      const before = yield* onFile(db, Saga.status("o-1"))
      const wire = before.steps.find((step) => step.state === "awaiting_approval")!.stepId
      const stopped = yield* interruptedAtItsAnswer("approve", "o-1", wire, "--as", "bob", "--db", db)
      expect(stopped).toEqual([
        `effect-saga: interrupted: this command journaled revision ${before.revision + 1} of saga o-1 before it stopped (effect-saga show o-1 shows where it stands)`
      ])
      const after = yield* onFile(db, Saga.status("o-1"))
      expect(after.revision).toBe(before.revision + 1)
      expect(after.steps.find((step) => step.stepId === wire)!.state).toBe("approved")
    })
  )

  it.scoped("a changing command stopped before it journaled anything says so", () =>
    Effect.gen(function* () {
      const db = freshFile()
      yield* onFile(db, Saga.start(Checkout, "o-1", { orderId: "o-1", amount: 4200 }))
      const before = yield* onFile(db, Saga.status("o-1"))
      const wire = before.steps.find((step) => step.state === "awaiting_approval")!.stepId
      // Asked again exactly as before, approve writes nothing and prints that it was already approved.
      yield* onFile(db, Saga.approve("o-1", wire, { by: "bob" }))
      const stopped = yield* interruptedAtItsAnswer("approve", "o-1", wire, "--as", "bob", "--db", db)
      expect(stopped).toEqual(["effect-saga: interrupted: this command journaled nothing"])
      expect((yield* onFile(db, Saga.status("o-1"))).revision).toBe(before.revision + 1)
    })
  )
})

/** Runs `effect` as a worker on the SQLite file, closing it after. */
const onFile = <A, E>(db: string, effect: Effect.Effect<A, E, Saga.Saga | Journal.Journal>) =>
  Effect.scoped(Effect.provide(effect, Saga.layer.pipe(Layer.provideMerge(SqlStore.layerSqlite({ filename: db })))))

/**
 * Runs the CLI in this process with a console whose `log` never returns, interrupts it once it
 * begins to print its answer, and answers the lines it printed on stderr.
 */
const interruptedAtItsAnswer = (...args: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const answering = yield* Deferred.make<void>()
    const err: Array<string> = []
    const stuck = (current: Console.Console): Console.Console => ({
      ...current,
      log: () => Effect.zipRight(Deferred.succeed(answering, undefined), Effect.never),
      error: (...parts) => Effect.sync(() => void err.push(parts.join(" ")))
    })
    const fiber = yield* Effect.fork(
      Effect.consoleWith((current) => Effect.withConsole(Cli.run(args), stuck(current))).pipe(
        Effect.provide(NodeContext.layer)
      )
    )
    yield* Deferred.await(answering)
    const exit = yield* Fiber.interrupt(fiber)
    expect(exit._tag).toBe("Failure")
    return err
  })
