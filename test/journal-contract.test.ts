/**
 * A `Journal` of one's own that breaks its contract: the writer checks what every append answers
 * (one entry per draft, at the seqs after the position it named, each with its hash) and stops the
 * run there, naming the store's fault, rather than go on from a position the journal does not hold.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Option } from "effect"
import { Approval, Journal, Saga } from "../src/index.js"
import { makeMemoryJournal } from "../src/internal/journal/memory.js"
import { recordedReserve } from "./fixtures/recorded-reserve.js"

/** A reservation whose calls nobody reads. */
const reserve = recordedReserve([])

/** The memory journal with its `append` replaced. */
const withAppend = (
  append: (store: Journal.Journal["Type"]) => Journal.Journal["Type"]["append"]
): Layer.Layer<Saga.Saga | Journal.Journal | Approval.Approval, unknown> => {
  const store = makeMemoryJournal()
  const journal = Layer.succeed(Journal.Journal, { ...store, append: append(store) })
  return Saga.layerWith({ owner: "worker-1" }).pipe(Layer.provideMerge(Layer.merge(journal, Approval.layerMemory)))
}

/** A store that appends wherever the saga is, whatever position it is given: no compare-and-set. */
const careless = withAppend(
  (store) => (sagaId, _expected, drafts, holder) =>
    Effect.flatMap(store.get(sagaId), (record) => {
      const position = Option.match(record, {
        onNone: () => Journal.empty,
        onSome: ({ digest, revision }) => ({ revision, digest })
      })
      return store.append(sagaId, position, drafts, holder)
    })
)

/** A store that writes its entries right, and answers them without their hashes. */
const hashless = withAppend(
  (store) => (sagaId, expected, drafts, holder) =>
    Effect.map(store.append(sagaId, expected, drafts, holder), (entries) =>
      entries.map((entry) => ({ ...entry, hash: "" }))
    )
)

/** An entry the run does not see coming, between its steps (written under its own lease). */
const meanwhile = Effect.flatMap(Journal.Journal, (journal) =>
  Effect.flatMap(journal.get("careless"), (record) => {
    const { digest, revision } = Option.getOrThrow(record)
    const note: Journal.Draft = { stepId: null, toolName: null, phase: "SAGA_RESUMED", input: null, payload: null }
    return journal.append("careless", { revision, digest }, [note], { owner: "worker-1", ttlMillis: 30_000 })
  })
)

const defectOf = (exit: Exit.Exit<unknown, unknown>) =>
  Exit.isFailure(exit) ? Cause.pretty(exit.cause).split("\n")[0] : "no defect"

describe("a Journal of one's own that breaks its contract", () => {
  it.effect("one that does not compare-and-set: the run stops at the answer, naming the store's fault", () =>
    Effect.gen(function* () {
      const program = Effect.zipRight(reserve("A-1"), Effect.zipRight(Effect.orDie(meanwhile), reserve("B-2")))
      const exit = yield* Effect.exit(Saga.run("careless", program))
      expect(defectOf(exit)).toContain(
        "effect-saga: the journal broke its contract: an append of 1 entry to saga careless"
      )
      expect(defectOf(exit)).toContain("the store did not append at the position it was given")
    }).pipe(Effect.provide(careless))
  )

  it.effect("one that answers its entries without their hashes: the run stops at the answer", () =>
    Effect.gen(function* () {
      const exit = yield* Effect.exit(Saga.run("hashless", reserve("A-1")))
      expect(defectOf(exit)).toContain("was answered with an entry at seq 1 without its hash")
    }).pipe(Effect.provide(hashless))
  )
})
