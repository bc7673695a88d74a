/**
 * PostgreSQL: when an append may skip group commit. An append that arrives at an idle store yields
 * once, as group commit's leader does; if no other append arrived meanwhile, it is sent straight, as
 * its own statement in one wait of its own, without group commit's queue, turn and hand-over around
 * it (one saga at a time, every append takes that path). Appends that arrive together, or while
 * another is in flight, go through group commit, and the one that yielded joins their batch.
 */

/** The appends in flight on one store, whichever path each took: `arrive` when one starts, `leave` when it has its outcome. */
export class Traffic {
  private inFlight = 0

  /** Counts an append in; `true` when nothing else is in flight: it may go straight if it stays alone. */
  arrive(): boolean {
    this.inFlight++
    return this.inFlight === 1
  }

  /** Whether the append that arrived at an idle store is still the only one in flight. */
  alone(): boolean {
    return this.inFlight === 1
  }

  leave(): void {
    this.inFlight--
  }
}
