/**
 * The CLI takes a saga's lease as a worker named as a command of the CLI (`effect-saga-cli/…`): a
 * worker or another operator refused with `LeaseHeld` while it runs reads that a command holds the
 * saga, to try again once it ends, not a service that drives it.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer } from "effect"
import * as Cli from "../src/Cli.js"
import { type Journal, Saga, SqlStore } from "../src/index.js"
import { gate, heldRelease } from "./fixtures/held-undo-tools.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-cli-lease-owner-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))
const tools = fileURLToPath(new URL("./fixtures/held-undo-tools.ts", import.meta.url))

/** Runs `effect` as a worker on the SQLite file, closing it after. */
const onFile = <A, E>(db: string, effect: Effect.Effect<A, E, Saga.Saga | Journal.Journal>) =>
  Effect.scoped(Effect.provide(effect, Saga.layer.pipe(Layer.provideMerge(SqlStore.layerSqlite({ filename: db })))))

describe("the CLI's lease", { timeout: 60_000 }, () => {
  it.live("a command mid-undo holds the saga as effect-saga-cli/HOST/PID/…: another worker's LeaseHeld says so", () =>
    Effect.gen(function* () {
      const db = path.join(dir, "held.db")
      expect((yield* onFile(db, Saga.run("h-1", heldRelease("h-1"))))._tag).toBe("Completed")
      const compensating = yield* Effect.fork(
        Cli.run(["compensate", "h-1", "--register", tools, "--as", "oncall", "--db", db]).pipe(
          Effect.provide(NodeContext.layer)
        )
      )
      yield* Deferred.await(gate.entered)
      const refused = yield* Effect.flip(onFile(db, Saga.compensate("h-1")))
      expect(refused._tag).toBe("LeaseHeld")
      const owner = refused._tag === "LeaseHeld" ? refused.owner : ""
      expect(owner).toMatch(
        new RegExp(
          `^effect-saga-cli/${os.hostname().replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}/${process.pid}/[0-9a-f]{6}$`
        )
      )
      expect(refused.message).toContain(`is being driven by ${owner} (lease until`)
      yield* Deferred.succeed(gate.release, undefined)
      yield* Fiber.join(compensating)
      expect((yield* onFile(db, Saga.status("h-1"))).status).toBe("compensated")
    })
  )
})
