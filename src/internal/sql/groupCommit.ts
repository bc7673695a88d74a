/** Group commit: appends that arrive together share one transaction, and each learns its own outcome. */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"

/**
 * Where a queued request learns what to do: its outcome (an `Exit`, itself the effect to resume
 * with), or, when its turn to commit the queue comes, the lead. A lighter `Deferred`: settled once,
 * by the fiber that committed the batch, with nothing allocated for it.
 */
class Turn<A, E> {
  private settled: Effect.Effect<A, E> | undefined
  private resume: ((next: Effect.Effect<A, E>) => void) | undefined

  settle(next: Effect.Effect<A, E>): void {
    if (this.resume === undefined) this.settled = next
    else this.resume(next)
  }

  wait(): Effect.Effect<A, E> {
    return Effect.async((resume) => {
      if (this.settled === undefined) this.resume = resume
      else resume(this.settled)
    })
  }
}

/** How many times a batch's lead yields, at most, while each yield brings new requests. */
export const MAX_GATHERING_YIELDS = 4

/**
 * Group commit: `commit` writes a batch of requests in one transaction and answers each with its
 * own outcome. The first request to arrive while no batch is being written leads: it yields until a
 * yield brings no new request (at most `MAX_GATHERING_YIELDS` times), so that every fiber about to
 * submit joins the queue, commits the whole queue, hands every other request its outcome, and
 * passes the lead to the first request that arrived meanwhile. Nothing waits on a timer, and a
 * request alone costs one yield.
 *
 * If `commit` dies, every request of its batch dies with it. The caller makes the wait
 * uninterruptible, so that a request that joined a batch always learns its outcome. The submit
 * function's `idle()` says whether no batch is forming or being written; `observe` learns each
 * batch's size as it is cut.
 */
export const groupCommit = <In, A, E>(
  commit: (batch: ReadonlyArray<In>) => Effect.Effect<ReadonlyArray<Exit.Exit<A, E>>>,
  observe: (size: number) => void = () => {}
) => {
  const queue: Array<{ readonly request: In; readonly turn: Turn<A, E> }> = []
  let writing = false

  /**
   * Yields until a yield brings no new request, at most `MAX_GATHERING_YIELDS` times: a fiber
   * resumed by the last batch that makes a hop of its own before it submits again (a new saga
   * started in its place makes one) joins this batch rather than leading a small one of its own.
   */
  const gather = (yields: number, seen: number): Effect.Effect<void> =>
    Effect.flatMap(Effect.yieldNow(), () =>
      queue.length > seen && yields < MAX_GATHERING_YIELDS ? gather(yields + 1, queue.length) : Effect.void
    )

  const lead = (own: (typeof queue)[number]): Effect.Effect<A, E> =>
    Effect.zipRight(
      Effect.suspend(() => gather(1, queue.length)),
      Effect.suspend(() => {
        const batch = queue.splice(0)
        observe(batch.length)
        return Effect.flatMap(Effect.exit(commit(batch.map((queued) => queued.request))), (exit) => {
          let mine: Exit.Exit<A, E> = Exit.die("effect-saga: a batch lost a request")
          // The batch died (`commit` has no failure of its own): every request dies with it.
          const died = Exit.isSuccess(exit) ? undefined : Exit.failCause(exit.cause)
          for (let index = 0; index < batch.length; index++) {
            const queued = batch[index]!
            const outcome = died ?? (exit as Exit.Success<ReadonlyArray<Exit.Exit<A, E>>, never>).value[index]!
            if (queued === own) mine = outcome
            else queued.turn.settle(outcome)
          }
          const next = queue[0]
          if (next === undefined) writing = false
          else next.turn.settle(lead(next))
          return mine
        })
      })
    )

  const submit = (request: In): Effect.Effect<A, E> =>
    Effect.suspend(() => {
      const queued = { request, turn: new Turn<A, E>() }
      queue.push(queued)
      if (!writing) {
        writing = true
        return lead(queued)
      }
      return queued.turn.wait()
    })
  return Object.assign(submit, { idle: (): boolean => !writing })
}
