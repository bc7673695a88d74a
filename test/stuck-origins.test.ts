/**
 * What a saga left behind was started from is read from its journal once: the HTTP API's
 * `needsHuman` listing, asked again (the console refreshed during an incident), reads no journal
 * twice; a saga started again under the same id, or another journal's saga of that id, is read.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Journal } from "../src/index.js"
import { makeMemoryJournal } from "../src/internal/journal/memory.js"
import { stuckAmong } from "../src/internal/util/stuck.js"
import { saga, started } from "./fixtures/drafts.js"

const suspended = saga("SAGA_SUSPENDED")
const fromDefinition = JSON.stringify({ definition: "payout", input: {} })

/** A memory journal that counts the sagas it reads. */
const counted = () => {
  const journal = makeMemoryJournal()
  const reads: Array<string> = []
  const counting: Journal.Journal["Type"] = {
    ...journal,
    read: (sagaId) =>
      Effect.zipRight(
        Effect.sync(() => reads.push(sagaId)),
        journal.read(sagaId)
      )
  }
  return { journal: counting, reads }
}

const stuckIn = (journal: Journal.Journal["Type"]) =>
  Effect.flatMap(journal.list(), (rows) =>
    Effect.provideService(stuckAmong(rows, Date.now()), Journal.Journal, journal)
  )

describe("the origin of a saga left behind", () => {
  it.effect("is read once a journal: a second listing reads no journal", () =>
    Effect.gen(function* () {
      const { journal, reads } = counted()
      yield* journal.append("a", Journal.empty, [started(null), suspended])
      yield* journal.append("b", Journal.empty, [started(null), suspended])
      yield* journal.append("c", Journal.empty, [started(fromDefinition), suspended])
      expect([...(yield* stuckIn(journal))].sort()).toEqual(["a", "b"])
      expect(reads.sort()).toEqual(["a", "b", "c"])
      reads.length = 0
      expect([...(yield* stuckIn(journal))].sort()).toEqual(["a", "b"])
      expect(reads).toEqual([])
    })
  )

  it.effect("another journal's saga of the same id is read from that journal", () =>
    Effect.gen(function* () {
      const first = counted()
      const second = counted()
      yield* first.journal.append("a", Journal.empty, [started(null), suspended])
      yield* second.journal.append("a", Journal.empty, [started(fromDefinition), suspended])
      expect([...(yield* stuckIn(first.journal))]).toEqual(["a"])
      expect([...(yield* stuckIn(second.journal))]).toEqual([])
      expect(second.reads).toEqual(["a"])
    })
  )

  it.effect("a saga pruned and started again under its id, later, is read again", () =>
    Effect.gen(function* () {
      const { journal, reads } = counted()
      yield* journal.append("a", Journal.empty, [started(null), suspended])
      expect([...(yield* stuckIn(journal))]).toEqual(["a"])
      const [row] = yield* journal.list()
      // The same id in a row created at another time: as a saga pruned and started again would be.
      const again = { ...row!, createdAt: "2999-01-01T00:00:00.000Z" }
      reads.length = 0
      expect([...(yield* Effect.provideService(stuckAmong([again], Date.now()), Journal.Journal, journal))]).toEqual([
        "a"
      ])
      expect(reads).toEqual(["a"])
    })
  )
})
