/**
 * The readers that verify a journal outside a `Saga` layer (`Journal.verify`, `Journal.inspect`,
 * `Journal.exportNdjson`, `Journal.importNdjson`, `Approval.inbox`) check MACs with the journal keys
 * the store was built with, as `Saga.status` does: `EFFECT_SAGA_JOURNAL_KEYS` changed or deleted
 * after the layers were built changes nothing. Only a journal of the user's own, whose keys the
 * library does not know, is read with the configuration at the call.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer } from "effect"
import { Approval, Journal, Saga } from "../src/index.js"
import { storesWherePossible } from "./fixtures/three-stores.js"
import { wire } from "./fixtures/wire.js"

const stores = await storesWherePossible("effect-saga-keys-built")

const key = `k1:${Buffer.alloc(32, 7).toString("base64")}`
const keyed = ConfigProvider.fromMap(new Map([["EFFECT_SAGA_JOURNAL_KEYS", key]]))
const unkeyed = ConfigProvider.fromMap(new Map())
/** The variable deleted (or set) after the layers were built: what each call reads of it now. */
const withoutKeys = Effect.withConfigProvider(unkeyed)
const withKeys = Effect.withConfigProvider(keyed)

/** A saga id of its own for each test: the PostgreSQL database is shared by the file. */
const sagaIdOf = (name: string) => `${name}-${Math.random().toString(36).slice(2, 10)}`

/** Runs `sagaId` to its approval, and gives the request. */
const awaiting = (sagaId: string) =>
  Effect.map(Saga.run(sagaId, wire({ amount: 42 })), (result) => {
    assert(result._tag === "AwaitingApproval")
    return result.request
  })

for (const [name, store] of stores) {
  const built = Saga.layer.pipe(Layer.provideMerge(store()))

  describe(`readers verify with the keys the store was built with: ${name}`, () => {
    it.effect("built with k1, the variable deleted since: verify, inspect, export and the inbox say intact", () =>
      Effect.gen(function* () {
        const sagaId = sagaIdOf("signed")
        const request = yield* withoutKeys(awaiting(sagaId))
        expect((yield* withoutKeys(Saga.status(sagaId))).tampered).toBeUndefined()

        expect(yield* withoutKeys(Journal.verify(sagaId))).toMatchObject({ _tag: "Intact" })
        expect((yield* withoutKeys(Journal.inspect(sagaId))).verification).toMatchObject({ _tag: "Intact" })
        const exported = yield* withoutKeys(Journal.exportNdjson(sagaId))
        expect(exported).toContain(`"sagaId":"${sagaId}"`)
        const listed = yield* withoutKeys(Approval.inbox)
        expect(listed.filter((pending) => pending.sagaId === sagaId)).toEqual([request])
      }).pipe(Effect.provide(built), withKeys)
    )

    it.effect("built without keys, a key configured since: an unsigned journal is still intact", () =>
      Effect.gen(function* () {
        const sagaId = sagaIdOf("unsigned")
        const request = yield* awaiting(sagaId)
        expect(yield* withKeys(Journal.verify(sagaId))).toMatchObject({ _tag: "Intact" })
        const listed = yield* withKeys(Approval.inbox)
        expect(listed.filter((pending) => pending.sagaId === sagaId)).toEqual([request])
      }).pipe(Effect.provide(built), withoutKeys)
    )
  })
}

describe("Journal.importNdjson checks MACs with the keys of the store it imports into", () => {
  /** A signed export of a saga awaiting approval. */
  const signedExport = (sagaId: string) =>
    Effect.gen(function* () {
      yield* awaiting(sagaId)
      return yield* Journal.exportNdjson(sagaId)
    }).pipe(
      Effect.provide(Saga.layer.pipe(Layer.provideMerge(Journal.layerMemory), Layer.provide(Approval.layerMemory))),
      withKeys
    )

  it.effect("into a store built with k1, the variable deleted since: imported, and intact there", () =>
    Effect.gen(function* () {
      const text = yield* signedExport("moved")
      const record = yield* withoutKeys(Journal.importNdjson(text))
      expect(record.sagaId).toBe("moved")
      expect(yield* withoutKeys(Journal.verify("moved"))).toMatchObject({ _tag: "Intact" })
    }).pipe(Effect.provide(Journal.layerMemory), withKeys)
  )

  it.effect("into a store built without keys, a key configured since: refused, as the store could not check it", () =>
    Effect.gen(function* () {
      const text = yield* signedExport("moved")
      const refused = yield* Effect.flip(withKeys(Journal.importNdjson(text)))
      expect(refused).toMatchObject({ _tag: "JournalCorrupted", seq: 1 })
      expect(refused.message).toContain("this process has no journal key")
    }).pipe(Effect.provide(Journal.layerMemory), withoutKeys)
  )
})

describe("a journal of the user's own, whose keys the library does not know", () => {
  it.effect("is verified with the configuration as each call reads it", () =>
    Effect.gen(function* () {
      const store = yield* Journal.Journal
      // Its own append: nothing tells the library which keys it signs with.
      const own = Journal.Journal.of({ ...store, append: (...args) => store.append(...args) })
      yield* awaiting("own")
      const verify = Journal.verify("own").pipe(Effect.provideService(Journal.Journal, own))
      expect(yield* withKeys(verify)).toMatchObject({ _tag: "Intact" })
      expect(yield* withoutKeys(verify)).toMatchObject({ _tag: "Broken", seq: 1, problem: "signature" })
    }).pipe(
      Effect.provide(Saga.layer.pipe(Layer.provideMerge(Journal.layerMemory), Layer.provide(Approval.layerMemory))),
      withKeys
    )
  )
})

describe("EFFECT_SAGA_JOURNAL_KEYS deleted from process.env after the layers were built", () => {
  it.effect("Approval.inbox and Journal.verify still verify with k1", () =>
    Effect.acquireUseRelease(
      Effect.sync(() => {
        process.env.EFFECT_SAGA_JOURNAL_KEYS = key
      }),
      () =>
        Effect.gen(function* () {
          const request = yield* awaiting("env")
          delete process.env.EFFECT_SAGA_JOURNAL_KEYS
          expect(yield* Approval.inbox).toEqual([request])
          expect(yield* Journal.verify("env")).toMatchObject({ _tag: "Intact" })
        }).pipe(
          Effect.provide(Saga.layer.pipe(Layer.provideMerge(Layer.merge(Journal.layerMemory, Approval.layerMemory))))
        ),
      () =>
        Effect.sync(() => {
          delete process.env.EFFECT_SAGA_JOURNAL_KEYS
        })
    )
  )
})
