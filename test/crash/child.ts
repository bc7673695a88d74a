/**
 * A worker of the crash harness, in a process of its own:
 *
 *   node --import tsx test/crash/child.ts <work|recover> <journal.db> <world.ndjson> <generation> <concurrency>
 *
 * (or compiled first: see ./runner.ts).
 *
 * Once its code is loaded it says `loaded` and waits for a `go` line on stdin (see ./protocol.ts).
 * Then it says `opening`, opens the journal and approvals on the SQLite file as worker "crash-worker"
 * (the same name in every generation, so that it takes its dead predecessor's sagas back at once),
 * recovers every saga left behind and says `ready`. In `work` mode it then starts new orders,
 * `concurrency` at a time, says `working` at their first provider call, and goes on until it is
 * killed; in `recover` mode it recovers until a pass finds nothing left and exits.
 *
 * Imports name single modules, not the barrels: through tsx, loading fewer files starts the process
 * about a second sooner (start-up is most of what a crash costs the harness).
 */
// Loaded before `loaded`, so that opening the journal after `go` does not wait for the native driver.
import "@effect/sql-sqlite-node/SqliteClient"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Recovery from "../../src/Recovery.js"
import * as Saga from "../../src/Saga.js"
import { waitForGo } from "../fixtures/go.js"
import { emit } from "./protocol.js"
import { Order, orderId, plannedToFail } from "./saga.js"
import { storeLayer } from "./store.js"
import * as World from "./world.js"

const [mode, journalFile, worldFile, generationArg, concurrencyArg] = process.argv.slice(2) as [
  "work" | "recover",
  string,
  string,
  string,
  string
]
const generation = Number(generationArg)
const concurrency = Number(concurrencyArg)
/** At most this many recovery passes in `recover` mode: a saga that cannot be resumed is released after each. */
const maxPasses = 10

const anomaly = (sagaId: string) => (cause: Cause.Cause<unknown>) =>
  Effect.sync(() => emit({ crash: "anomaly", sagaId, message: Cause.pretty(cause).split("\n")[0]! }))

/** One recovery pass, told to the parent; returns how many sagas it claimed. */
const recoverPass = (recovery: Recovery.Recovery["Type"]) =>
  Effect.gen(function* () {
    const started = performance.now()
    const report = yield* recovery.recoverAll
    for (const saga of report.sagas) {
      if (saga._tag === "Failed") yield* anomaly(saga.sagaId)(Cause.fail(saga.error))
    }
    emit({
      crash: "ready",
      recovered: report.sagas.length,
      results: Recovery.summary(report),
      recoveryMillis: Math.round(performance.now() - started)
    })
    return report.sagas.length
  })

/**
 * Starts orders `g<generation>-<n>` for n = 0, 1, 2, … on `concurrency` fibers, forever, and says
 * `working` when the first of them calls its provider.
 */
const work = Effect.gen(function* () {
  const world = yield* World.World
  const firstCall = yield* Deferred.make<void>()
  yield* Effect.fork(
    Effect.zipRight(
      Deferred.await(firstCall),
      Effect.sync(() => emit({ crash: "working" }))
    )
  )
  const announcing = World.World.of({
    call: (request) => Effect.zipLeft(world.call(request), Deferred.succeed(firstCall, undefined))
  })
  let next = 0
  const startNext = Effect.suspend(() => {
    const n = next++
    const sagaId = orderId(generation, n)
    return Saga.start(Order, sagaId, { n, fail: plannedToFail(n) }).pipe(
      Effect.provideService(World.World, announcing),
      Effect.catchAllCause(anomaly(sagaId))
    )
  })
  return yield* Effect.forEach(
    Array.from({ length: concurrency }, () => Effect.forever(startNext)),
    (loop) => loop,
    { concurrency: "unbounded", discard: true }
  )
})

const program = Effect.gen(function* () {
  const recovery = yield* Recovery.make({ definitions: [Order], concurrency })
  if (mode === "work") {
    yield* recoverPass(recovery)
    return yield* work
  }
  let passes = 1
  while ((yield* recoverPass(recovery)) > 0 && passes < maxPasses) passes++
  emit({ crash: "done", passes })
})

const layer = Saga.layerWith({ owner: "crash-worker", leaseTtl: "10 seconds" }).pipe(
  Layer.provideMerge(storeLayer(journalFile)),
  Layer.provideMerge(World.layer(worldFile, generation)),
  // Stdout carries the protocol: the library's log lines go to stderr.
  Layer.provideMerge(Logger.replace(Logger.defaultLogger, Logger.withConsoleError(Logger.logfmtLogger)))
)

emit({ crash: "loaded", startupMillis: Math.round(process.uptime() * 1000) })
const opening = Effect.sync(() => emit({ crash: "opening" }))
Effect.runPromise(Effect.zipRight(Effect.zipRight(waitForGo, opening), Effect.provide(program, layer))).catch(
  (error) => {
    process.stderr.write(`${String(error)}\n`)
    process.exit(1)
  }
)
