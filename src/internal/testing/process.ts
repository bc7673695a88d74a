/**
 * The processes of one crash point: each opens the point's store (the same memory, or the SQLite file
 * again), runs a `Saga` service over it as the crash switch lets it, and dies where the switch says.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Approval from "../../Approval.js"
import * as Journal from "../../Journal.js"
import type { KeyError } from "../../Keys.js"
import * as Saga from "../../Saga.js"
import * as SqlStore from "../../SqlStore.js"
import { Faults } from "../engine/faults.js"
import { horizon } from "./clock.js"
import type { CrashSwitch, Ledger } from "./crash.js"
import { storeThrough } from "./crash.js"

export type Store = Context.Context<Journal.Journal | Approval.Approval>
export type StoreError = Journal.JournalError | Journal.JournalCorrupted | KeyError

/** Every process runs as this worker: a restarted one drops the leases its dead predecessor held. */
const owner = "effect-saga/explore"

/**
 * Leases that outlast the time the explorer moves a process's clock through (`advancing`): their
 * renewal, every third of it, never wakes it up, and a sleep pending is always the saga's own.
 */
const leaseTtl = Duration.times(horizon, 4)

/** Opens the store of one crash point in the scope of one process: the same memory, or the file again. */
export type Opener = Effect.Effect<Store, StoreError, Scope.Scope>

const memoryStore: Layer.Layer<Journal.Journal | Approval.Approval, KeyError> = Layer.merge(
  Journal.layerMemory,
  Approval.layerMemory
)

/** A temporary directory for the SQLite files, removed with the scope. */
export const temporaryDirectory = Effect.acquireRelease(
  Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-explore-"))),
  (directory) => Effect.sync(() => fs.rmSync(directory, { recursive: true, force: true }))
)

export const openerFor = (
  store: "memory" | "sqlite",
  directory: string,
  index: number
): Effect.Effect<Opener, KeyError, Scope.Scope> =>
  store === "sqlite"
    ? Effect.succeed<Opener>(Layer.build(SqlStore.layerSqlite({ filename: path.join(directory, `point-${index}.db`) })))
    : Effect.map(Layer.build(memoryStore), (context): Opener => Effect.succeed(context))

/** The `services` layer failed to build: the exploration fails with its error, as it is. */
export class ServicesFailed {
  constructor(readonly error: unknown) {}
}

/** One process's life over the store, as `crash` lets it live. */
export const live = <X, EX, W>(
  open: Opener,
  crash: CrashSwitch,
  ledger: Ledger,
  world: Context.Context<W>,
  services: Layer.Layer<any, unknown, any>,
  body: Effect.Effect<X, EX, any>
): Effect.Effect<X, EX | StoreError | unknown> =>
  Effect.scoped(
    Effect.gen(function* () {
      const raw = yield* open
      const seen = storeThrough(crash, Context.get(raw, Journal.Journal), Context.get(raw, Approval.Approval))
      const store = Context.make(Journal.Journal, seen.journal).pipe(Context.add(Approval.Approval, seen.approval))
      const saga = yield* Effect.provide(Layer.build(Saga.layerWith({ owner, leaseTtl })), store)
      // The test's own faults (`Testing.faults` in the world, kept across a crash, or in the
      // services, built again by each process) strike inside the explorer's, which counts and cuts.
      const faults = ledger.faults(crash, Context.getOption(world, Faults))
      const process = Context.merge(Context.merge(world, store), Context.merge(saga, faults))
      const built = yield* Effect.provide(Layer.build(services), process).pipe(
        Effect.mapError((error) => new ServicesFailed(error))
      )
      const own = Context.getOption(built, Faults)
      const counted = Option.isSome(own)
        ? Context.add(built, Faults, Context.get(ledger.faults(crash, own), Faults))
        : built
      return yield* Effect.provide(body, Context.merge(process, counted))
    })
  )

/** Lives until the process finishes or is killed; a killed process is interrupted whatever it was doing. */
export const liveUntilKilled = <X, EX>(life: Effect.Effect<X, EX>, crash: CrashSwitch) =>
  Effect.gen(function* () {
    const fiber = yield* Effect.fork(life)
    yield* Effect.raceFirst(Effect.asVoid(Fiber.await(fiber)), crash.killed.pipe(Effect.asVoid))
    if (crash.crashed) yield* Fiber.interrupt(fiber)
    return yield* Fiber.await(fiber)
  })
