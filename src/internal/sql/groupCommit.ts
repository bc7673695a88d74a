/** Group commit: appends that arrive together share one transaction, and each learns its own outcome. */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"

/**
 * Where a queued request learns its outcome, or that it is its turn to commit the queue (`"lead"`).
 * A lighter `Deferred`: settled once, by the fiber that committed the batch.
 */
class Turn<Out> {
  private settled: Out | "lead" | undefined
  private resume: ((result: Effect.Effect<Out | "lead">) => void) | undefined

  settle(result: Out | "lead"): void {
    if (this.resume === undefined) this.settled = result
    else this.resume(Effect.succeed(result))
  }

  wait(): Effect.Effect<Out | "lead"> {
    return Effect.async((resume) => {
      if (this.settled === undefined) this.resume = resume
      else resume(Effect.succeed(this.settled))
    })
  }
}

/**
 * Group commit: `commit` writes a batch of requests in one transaction and answers each with its
 * own outcome. The first request to arrive while no batch is being written leads: it yields once,
 * so that every fiber ready to submit joins the queue, commits the whole queue, hands every other
 * request its outcome, and passes the lead to the first request that arrived meanwhile. Nothing
 * waits on a timer, and a request alone costs one yield.
 *
 * If `commit` dies, every request of its batch dies with it. The caller makes the wait
 * uninterruptible, so that a request that joined a batch always learns its outcome. The submit
 * function's `idle()` says whether no batch is forming or being written; `observe` learns each
 * batch's size as it is cut.
 */
export const groupCommit = <In, Out>(
  commit: (batch: ReadonlyArray<In>) => Effect.Effect<ReadonlyArray<Out>>,
  observe: (size: number) => void = () => {}
) => {
  const queue: Array<{ readonly request: In; readonly turn: Turn<Exit.Exit<Out>> }> = []
  let writing = false

  const lead = (own: (typeof queue)[number]): Effect.Effect<Out> =>
    Effect.zipRight(
      Effect.yieldNow(),
      Effect.suspend(() => {
        const batch = queue.splice(0)
        observe(batch.length)
        return Effect.flatMap(Effect.exit(commit(batch.map((queued) => queued.request))), (exit) => {
          let mine: Exit.Exit<Out> = Exit.die("effect-saga: a batch lost a request")
          for (const [index, queued] of batch.entries()) {
            const outcome = Exit.map(exit, (outcomes) => outcomes[index]!)
            if (queued === own) mine = outcome
            else queued.turn.settle(outcome)
          }
          const next = queue[0]
          if (next === undefined) writing = false
          else next.turn.settle("lead")
          return mine
        })
      })
    )

  const submit = (request: In): Effect.Effect<Out> =>
    Effect.suspend(() => {
      const queued = { request, turn: new Turn<Exit.Exit<Out>>() }
      queue.push(queued)
      if (!writing) {
        writing = true
        return lead(queued)
      }
      return Effect.flatMap(queued.turn.wait(), (turn) => (turn === "lead" ? lead(queued) : turn))
    })
  return Object.assign(submit, { idle: (): boolean => !writing })
}
