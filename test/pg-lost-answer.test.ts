/**
 * PostgreSQL: an append whose connection is lost after it was sent, so that the server may have
 * committed it unheard. The journal reads the saga again before it answers: an append the store
 * holds succeeds, one it does not hold fails saying so, and one it cannot tell about fails saying
 * that whether it was written is unknown. A proxy between the journal and the server
 * (fixtures/answer-cutting-proxy.ts) loses the answers.
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Schema, type Scope } from "effect"
import { Compensable, Journal, Saga } from "../src/index.js"
import * as Postgres from "../src/Postgres.js"
import { type AnswerCuttingProxy, answerCuttingProxy } from "./fixtures/answer-cutting-proxy.js"
import { saga, step } from "./fixtures/drafts.js"
import { freshDatabase } from "./fixtures/postgres.js"

const url = await freshDatabase("effect_saga_lost_answer")

describe("PostgreSQL: an append whose answer was lost", () => {
  it.scoped(
    "sent straight, committed by the server: it succeeds with its entries, and the saga goes on from them",
    () =>
      Effect.gen(function* () {
        const { direct, proxied, proxy } = yield* journals
        proxy.arm(cutAnswer)
        const written = yield* proxied.append("straight", Journal.empty, [saga("SAGA_STARTED"), step("INTENT", "a")])
        expect(proxy.faults()).toBe(1)
        expect(written.map((entry) => entry.seq)).toEqual([1, 2])
        expect(yield* direct.read("straight")).toEqual(written)
        const next = yield* proxied.append("straight", positionAfter(written), [step("EXECUTED", "a")])
        expect(next.map((entry) => entry.seq)).toEqual([3])
      })
  )

  it.scoped(
    "a batch of group commit, committed by the server: each append succeeds, none is taken for another worker's",
    () =>
      Effect.gen(function* () {
        const { direct, proxied, proxy } = yield* journals
        const started = yield* Effect.forEach(["batch-1", "batch-2"], (sagaId) =>
          proxied.append(sagaId, Journal.empty, [saga("SAGA_STARTED")])
        )
        proxy.arm(cutAnswer)
        const written = yield* Effect.all(
          started.map((entries) =>
            proxied.append(entries[0]!.sagaId, positionAfter(entries), [step("INTENT", "a"), step("EXECUTED", "a")])
          ),
          { concurrency: "unbounded" }
        )
        expect(proxy.faults()).toBe(1)
        expect(written.map((entries) => entries.map((entry) => entry.seq))).toEqual([
          [2, 3],
          [2, 3]
        ])
        for (const entries of written) {
          expect(yield* direct.read(entries[0]!.sagaId)).toEqual([
            ...(started[written.indexOf(entries)] ?? []),
            ...entries
          ])
        }
      })
  )

  it.scoped("an append in a transaction of its own (over 64 entries) whose COMMIT's answer is lost succeeds", () =>
    Effect.gen(function* () {
      const { direct, proxied, proxy } = yield* journals
      const many = [saga("SAGA_STARTED"), ...Array.from({ length: 64 }, (_, n) => step("INTENT", `s-${n}`))]
      proxy.arm(cutAnswer, "COMMIT")
      const written = yield* proxied.append("many", Journal.empty, many)
      expect(proxy.faults()).toBe(1)
      expect(written.length).toBe(65)
      expect((yield* direct.read("many")).length).toBe(65)
    })
  )

  it.scoped("one that never reached the server fails saying it was not written, and can be made again", () =>
    Effect.gen(function* () {
      const { direct, proxied, proxy } = yield* journals
      const started = yield* proxied.append("dropped", Journal.empty, [saga("SAGA_STARTED")])
      proxy.arm({ _tag: "DropRequest" })
      const error = yield* Effect.flip(proxied.append("dropped", positionAfter(started), [step("INTENT", "a")]))
      expect(proxy.faults()).toBe(1)
      expect(error).toMatchObject({ _tag: "JournalError", operation: "append" })
      expect(error.message).toMatch(/; it was not written: the journal, read again, does not hold it$/)
      expect(yield* direct.read("dropped")).toEqual(started)
      const again = yield* proxied.append("dropped", positionAfter(started), [step("INTENT", "a")])
      expect(again.map((entry) => entry.seq)).toEqual([2])
    })
  )

  it.scoped("when the journal cannot be read after, the JournalError says that whether it was written is unknown", () =>
    Effect.gen(function* () {
      const { direct, proxied, proxy } = yield* journals
      proxy.arm({ _tag: "CutAnswer", thenDown: true })
      const error = yield* Effect.flip(proxied.append("unknown", Journal.empty, [saga("SAGA_STARTED")]))
      expect(proxy.faults()).toBe(1)
      expect(error).toMatchObject({ _tag: "JournalError", operation: "append" })
      expect(error.message).toMatch(
        /^journal append failed: .+; whether it was written is unknown: the journal could not be read after \(.+\)$/
      )
      // It was: the server committed it.
      expect((yield* direct.read("unknown")).map((entry) => entry.phase)).toEqual(["SAGA_STARTED"])
    })
  )

  it.scoped("a saga whose step's INTENT was committed unheard runs the step once and completes", () =>
    Effect.gen(function* () {
      const proxy = yield* answerCuttingProxy(url)
      const calls: Array<string> = []
      proxy.arm(cutAnswer, "charge")
      const result = yield* Saga.run("order-cut", order(calls)).pipe(
        Effect.provide(Saga.layer.pipe(Layer.provideMerge(Postgres.layer({ url: proxy.url })), Layer.fresh))
      )
      expect(proxy.faults()).toBe(1)
      expect(result._tag).toBe("Completed")
      expect(calls).toEqual(["reserve", "charge", "ship"])
    })
  )
})

/** The answer of the request is lost; the server stays up. */
const cutAnswer = { _tag: "CutAnswer", thenDown: false } as const

/** The position a saga is at once `entries` were written. */
const positionAfter = (entries: ReadonlyArray<Journal.Entry>): Journal.Expected => {
  const last = entries[entries.length - 1]!
  return { revision: last.seq, digest: last.hash }
}

/** A journal through a proxy of its own, and one straight to the server to check what it holds. */
const journals: Effect.Effect<
  {
    readonly direct: Journal.Journal["Type"]
    readonly proxied: Journal.Journal["Type"]
    readonly proxy: AnswerCuttingProxy
  },
  unknown,
  Scope.Scope
> = Effect.gen(function* () {
  const proxy = yield* answerCuttingProxy(url)
  const open = (at: string) =>
    Effect.map(Layer.build(Layer.fresh(Postgres.layerJournal({ url: at }))), Context.get(Journal.Journal))
  return { direct: yield* open(url), proxied: yield* open(proxy.url), proxy }
})

/** Three tools in turn, each noting its call in `calls`. */
const order = (calls: Array<string>) =>
  Effect.gen(function* () {
    for (const name of ["reserve", "charge", "ship"]) {
      yield* Compensable.make({
        name,
        input: Schema.Struct({ n: Schema.Number }),
        success: Schema.String,
        execute: () => Effect.sync(() => calls.push(name)).pipe(Effect.as(`${name}-done`)),
        compensate: () => Effect.void
      })({ n: 1 })
    }
  })
