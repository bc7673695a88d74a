import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { groupCommit, MAX_GATHERING_YIELDS } from "../src/internal/sql/groupCommit.js"

/** Group commit over a commit that answers every request with itself, recording each batch. */
const recorded = () => {
  const batches: Array<ReadonlyArray<string>> = []
  const submit = groupCommit((batch: ReadonlyArray<string>) =>
    Effect.sync(() => {
      batches.push(batch)
      return batch.map((request) => Exit.succeed(request))
    })
  )
  return { batches, submit }
}

/** `effect` after `hops` yields: a fiber that makes hops of its own before it submits. */
const behind = <A>(hops: number, effect: Effect.Effect<A>): Effect.Effect<A> =>
  hops === 0 ? effect : Effect.zipRight(Effect.yieldNow(), behind(hops - 1, effect))

describe("group commit's lead", () => {
  it.effect("waits, without a timer, for a request one hop behind the others: one batch, not two", () =>
    Effect.gen(function* () {
      const { batches, submit } = recorded()
      const answers = yield* Effect.all([submit("lead"), submit("ready"), behind(1, submit("one hop behind"))], {
        concurrency: "unbounded"
      })
      expect(answers).toEqual(["lead", "ready", "one hop behind"])
      expect(batches).toEqual([["lead", "ready", "one hop behind"]])
    })
  )

  it.effect("a request alone is committed after one yield, on its own", () =>
    Effect.gen(function* () {
      const { batches, submit } = recorded()
      expect(yield* submit("alone")).toBe("alone")
      expect(yield* behind(3, submit("later"))).toBe("later")
      expect(batches).toEqual([["alone"], ["later"]])
    })
  )

  it.effect("stops waiting after MAX_GATHERING_YIELDS yields that each brought a request", () =>
    Effect.gen(function* () {
      expect(MAX_GATHERING_YIELDS).toBe(4)
      const { batches, submit } = recorded()
      yield* Effect.all(
        [submit("lead"), ...Array.from({ length: 6 }, (_, hops) => behind(hops, submit(`${hops} hops behind`)))],
        { concurrency: "unbounded" }
      )
      // Four yields: the requests up to three hops behind the lead; the later ones in batches after it.
      expect(batches[0]).toEqual(["lead", "0 hops behind", "1 hops behind", "2 hops behind", "3 hops behind"])
      expect(batches.flat()).toHaveLength(7)
    })
  )
})
