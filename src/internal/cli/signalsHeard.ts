/**
 * The scheduler the CLI's commands run on, so that SIGINT and SIGTERM are heard while a command
 * computes. Node hears a signal only when its event loop turns, between macrotasks; Effect's default
 * scheduler resumes a busy fiber in microtasks for 2,048 turns before a timer lets the loop run, and
 * a command's operations on SQLite (whose driver is synchronous: opening and migrating the store,
 * reading and verifying thousands of sagas) can each take milliseconds: `verify --all`, `list` and
 * `prune` ran for a second or more with a signal unheard, then exited 0 (a `prune` deleted what it
 * found).
 *
 * @since 0.5.0
 */
import type * as Fiber from "effect/Fiber"
import * as Scheduler from "effect/Scheduler"

/** How long a command may compute before it lets the event loop turn (and hear a signal). */
const TURN_MS = 20

/** How many operations a fiber runs between two looks at the clock. */
const OPS_BETWEEN_LOOKS = 64

/**
 * Effect's own scheduler, but that once `TURN_MS` have passed since the event loop last ran one of
 * its tasks, has the running fiber yield, and runs what is scheduled then (in the order it was
 * scheduled) in one `setImmediate`: the loop turns first, and delivers a signal that arrived.
 *
 * @since 0.5.0
 * @category scheduling
 */
export class SignalsHeard implements Scheduler.Scheduler {
  private readonly effects = new Scheduler.MixedScheduler(2048)
  private loopTurnedAt = performance.now()
  private waiting: Array<Scheduler.Task> | undefined

  shouldYield(fiber: Fiber.RuntimeFiber<unknown, unknown>): number | false {
    if (fiber.currentOpCount % OPS_BETWEEN_LOOKS === 0 && this.overdue()) return 0
    return this.effects.shouldYield(fiber)
  }

  scheduleTask(task: Scheduler.Task, priority: number, fiber?: Fiber.RuntimeFiber<unknown, unknown>): void {
    if (this.waiting !== undefined) this.waiting.push(task)
    else if (!this.overdue()) this.effects.scheduleTask(task, priority, fiber)
    else {
      this.waiting = [task]
      setImmediate(() => this.runWaiting())
    }
  }

  private runWaiting(): void {
    const tasks = this.waiting ?? []
    this.waiting = undefined
    this.loopTurnedAt = performance.now()
    for (const task of tasks) task()
  }

  private overdue(): boolean {
    return performance.now() - this.loopTurnedAt > TURN_MS
  }
}
