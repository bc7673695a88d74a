import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { Compensable, Outcome, Saga } from "../src/index.js"
import * as Testing from "../src/Testing.js"

describe("sagas inside sagas", () => {
  it.effect("a sub-program composed inline is part of its saga: one journal, one compensation", () =>
    Effect.gen(function* () {
      const { book, refuse, world } = fixture()
      const hotelPart = (city: string) => Effect.zipRight(book(`flight to ${city}`), book(`hotel in ${city}`))
      const result = yield* Saga.run(
        "trip-1",
        Effect.gen(function* () {
          yield* hotelPart("Oslo")
          yield* refuse("car")
        })
      )
      expect(result._tag).toBe("Compensated")
      expect(world).toEqual([])
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect(
    "a nested Saga.run of another id, in the program or in a tool's execute, is an independent saga the outer compensation leaves alone",
    () =>
      Effect.gen(function* () {
        const { book, refuse, world } = fixture()
        const viaTool = Compensable.make({
          name: "viaTool",
          input: Schema.String,
          success: Schema.String,
          execute: (item) => Effect.map(Saga.run(`sub-of-${item}`, book(item)), (result) => result._tag),
          compensate: () => Effect.void
        })
        const result = yield* Saga.run(
          "trip-2",
          Effect.gen(function* () {
            yield* book("flight")
            const sub = yield* Saga.run("trip-2-hotel", book("hotel"))
            expect(sub._tag).toBe("Completed")
            yield* viaTool("car")
            yield* refuse("train")
          })
        )
        expect(result._tag).toBe("Compensated")
        // The outer saga undid its own steps only: the sub-sagas' effects stay, and they stay completed.
        expect(world).toEqual(["hotel", "car"])
        expect((yield* Saga.status("trip-2-hotel")).status).toBe("completed")
        expect((yield* Saga.status("sub-of-car")).status).toBe("completed")
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("Saga.currentSagaId is the id of the saga the program runs as: a nested saga's id derives from it", () =>
    Effect.gen(function* () {
      const { book } = fixture()
      const trip = Effect.gen(function* () {
        const sagaId = yield* Saga.currentSagaId
        const hotel = yield* Saga.run(`${sagaId}/hotel`, book("hotel"))
        return { sagaId, hotel: hotel._tag }
      })
      expect(yield* Saga.run("trip-3", trip)).toMatchObject({
        _tag: "Completed",
        value: { sagaId: "trip-3", hotel: "Completed" }
      })
      expect((yield* Saga.status("trip-3/hotel")).status).toBe("completed")
    }).pipe(Effect.provide(Testing.layer))
  )
})

/** `book` adds an item to the world and its undo takes it away; `refuse` always fails. */
const fixture = () => {
  const world: Array<string> = []
  const book = Compensable.make({
    name: "book",
    input: Schema.String,
    success: Schema.String,
    execute: (item) =>
      Effect.sync(() => {
        world.push(item)
        return item
      }),
    compensate: ({ input }) => Effect.sync(() => world.splice(world.indexOf(input), 1))
  })
  const refuse = Compensable.make({
    name: "refuse",
    input: Schema.String,
    success: Schema.String,
    execute: (item) => Effect.fail(Outcome.failed(`no ${item}`))
  })
  return { book, refuse, world }
}
