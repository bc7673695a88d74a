/**
 * The crash harness: children run orders on one SQLite journal and are killed with SIGKILL at
 * random moments, `kills` times; a last child recovers what they left behind; then the journal is
 * audited against the world file (./audit.ts). See docs/recovery.md, "Crash harness".
 */
import * as fs from "node:fs"
import * as path from "node:path"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { Audit, Check } from "./audit.js"
import { audit, loadJournal } from "./audit.js"
import type { Child } from "./process.js"
import { spawnChild } from "./process.js"
import type { Anomaly } from "./protocol.js"
import type { RunnerKind } from "./runner.js"
import { makeRunner } from "./runner.js"
import { generationOf } from "./saga.js"
import { readCalls } from "./world.js"

/** How a crash run goes. */
export interface HarnessOptions {
  /** How many children are killed. */
  readonly kills: number
  /** Where the journal (`journal.db`) and the world (`world.ndjson`) are written; earlier ones are replaced. */
  readonly dir: string
  /** A PostgreSQL database (an empty one: `postgres://…`) to keep the journal in instead of `journal.db`. */
  readonly postgres?: string | undefined
  /** How many orders a child runs at once (default 6). */
  readonly concurrency?: number | undefined
  /** A child is killed a random 0 to this many milliseconds after it said `working` (default 400). */
  readonly maxKillDelayMillis?: number | undefined
  /**
   * The share of kills aimed at start-up instead (opening the journal, dropping the old leases,
   * recovering, the first new orders): counted from `opening`, not `working` (default 0.2).
   */
  readonly killDuringStartup?: number | undefined
  /** How children run: compiled once up front (default), or through tsx's loader. See ./runner.ts. */
  readonly runner?: RunnerKind | undefined
  /** Seeds the kill times, so that a run's schedule can be repeated (the children's timing still varies). */
  readonly seed?: number | undefined
  /** Called after each kill, for progress output. */
  readonly onRestart?: ((restart: Restart) => void) | undefined
}

/** One child's life, from `go` to SIGKILL. */
export interface Restart {
  readonly generation: number
  /** From the process's start to its `loaded` line: loading its code (partly hidden behind its predecessor's run). */
  readonly startupMillis: number
  /** The child's recovery pass, if it finished before the kill. */
  readonly recovery: { readonly millis: number; readonly sagas: number } | undefined
  /** What the kill was aimed at, and how long after `opening` (start-up) or `working` (work) it came. */
  readonly aimedAt: "startup" | "work"
  readonly delayMillis: number
  /** From `go` to the process being gone. */
  readonly lifeMillis: number
}

/** What a crash run found. */
export interface CrashFigures {
  readonly seed: number
  readonly runner: RunnerKind
  readonly kills: number
  readonly restarts: ReadonlyArray<Restart>
  /** How many orders each killed child started (had journaled), by generation: 0 if it was killed before its first. */
  readonly ordersByChild: ReadonlyArray<number>
  /** The last child's recovery: its time, the sagas it claimed, its passes (the last found nothing). */
  readonly finalRecovery: { readonly millis: number; readonly sagas: number; readonly passes: number }
  readonly anomalies: ReadonlyArray<Anomaly>
  readonly audit: Audit
  /** The audit's checks and one more: no child reported an anomaly. */
  readonly checks: ReadonlyArray<Check>
  readonly passed: boolean
  readonly wallMillis: number
}

/** Generous: start-up through tsx on a loaded two-core machine, and recovery of a few hundred sagas. */
const startupTimeout = "60 seconds"
const recoveryTimeout = "3 minutes"

/** A small seeded generator (mulberry32): numbers in [0, 1). */
const seeded = (seed: number) => {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const elapsedSince = (start: number) => Math.round(performance.now() - start)

/**
 * Lets a loaded child go, starts its successor (which loads its code meanwhile and waits for its own
 * `go`), kills the child a random while later, and says how it went.
 */
const crashOnce = (child: Child, successor: Effect.Effect<Child, never, Scope.Scope>, plan: KillPlan) =>
  Effect.gen(function* () {
    const { startupMillis } = yield* child.waitFor("loaded", startupTimeout)
    const started = performance.now()
    yield* child.go
    const next = yield* successor
    yield* child.waitFor(plan.aimedAt === "work" ? "working" : "opening", recoveryTimeout)
    yield* Effect.sleep(Duration.millis(plan.delayMillis))
    yield* child.kill
    const ready = child.messages.find((message) => message.crash === "ready")
    const restart: Restart = {
      generation: plan.generation,
      startupMillis,
      recovery: ready === undefined ? undefined : { millis: ready.recoveryMillis, sagas: ready.recovered },
      aimedAt: plan.aimedAt,
      delayMillis: plan.delayMillis,
      lifeMillis: elapsedSince(started)
    }
    return { restart, next }
  })

/** Lets the last child go and waits for its end: recovery passes until nothing is left behind. */
const recoverFinally = (child: Child) =>
  Effect.gen(function* () {
    yield* child.waitFor("loaded", startupTimeout)
    yield* child.go
    const { passes } = yield* child.waitFor("done", recoveryTimeout)
    yield* child.exit(startupTimeout)
    const readies = child.messages.filter((message) => message.crash === "ready")
    return {
      millis: readies.reduce((sum, ready) => sum + ready.recoveryMillis, 0),
      sagas: readies.reduce((sum, ready) => sum + ready.recovered, 0),
      passes
    }
  })

/** Where and when one child is killed. */
interface KillPlan {
  readonly generation: number
  readonly aimedAt: Restart["aimedAt"]
  readonly delayMillis: number
}

/** Removes the journal (with its WAL files) and the world of an earlier run. */
const clean = (dir: string, journal: string, world: string) => {
  fs.mkdirSync(dir, { recursive: true })
  for (const file of [journal, `${journal}-wal`, `${journal}-shm`, world]) fs.rmSync(file, { force: true })
}

/**
 * Kills `kills` children at random moments, recovers, and audits the journal against the world.
 * Fails only if a child misbehaves as a process (`ChildFailed`: it exits by itself, or hangs) or the
 * journal cannot be read; what the audit finds is in the figures' `checks`.
 */
export const runCrashHarness = (options: HarnessOptions) =>
  Effect.scoped(
    Effect.gen(function* () {
      const started = performance.now()
      const seed = options.seed ?? Math.floor(Math.random() * 2 ** 32)
      const random = seeded(seed)
      const journal = options.postgres ?? path.join(options.dir, "journal.db")
      const world = path.join(options.dir, "world.ndjson")
      clean(options.dir, journal, world)
      const runner = yield* makeRunner(options.runner ?? "compiled")
      // Generation `kills` is the last child: it only recovers.
      const spawnGeneration = (generation: number) =>
        spawnChild(runner, {
          mode: generation < options.kills ? "work" : "recover",
          journal,
          world,
          generation,
          concurrency: options.concurrency ?? 6
        })

      const restarts: Array<Restart> = []
      const children: Array<Child> = []
      let child = yield* spawnGeneration(0)
      for (let generation = 0; generation < options.kills; generation++) {
        children.push(child)
        const plan: KillPlan = {
          generation,
          aimedAt: random() < (options.killDuringStartup ?? 0.2) ? "startup" : "work",
          delayMillis: Math.floor(random() * (options.maxKillDelayMillis ?? 400))
        }
        const crashed = yield* crashOnce(child, spawnGeneration(generation + 1), plan)
        restarts.push(crashed.restart)
        options.onRestart?.(crashed.restart)
        child = crashed.next
      }
      children.push(child)
      const finalRecovery = yield* recoverFinally(child)

      const stored = yield* loadJournal(journal)
      const audited = audit(stored, readCalls(world))
      const ordersByChild = restarts.map(() => 0)
      for (const saga of stored) {
        const generation = generationOf(saga.status.sagaId)
        if (generation < ordersByChild.length) ordersByChild[generation]!++
      }
      const anomalies = children.flatMap((child) => child.messages.filter((message) => message.crash === "anomaly"))
      const checks = [
        ...audited.checks,
        {
          name: "7. no child reported an anomaly (a run or a recovery that failed)",
          failures: anomalies.map((anomaly) => `${anomaly.sagaId}: ${anomaly.message}`)
        }
      ]
      const figures: CrashFigures = {
        seed,
        runner: runner.kind,
        kills: options.kills,
        restarts,
        ordersByChild,
        finalRecovery,
        anomalies,
        audit: audited,
        checks,
        passed: checks.every((check) => check.failures.length === 0),
        wallMillis: elapsedSince(started)
      }
      return figures
    })
  )
