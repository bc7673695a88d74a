import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Logger, Schema } from "effect"
import { Approval, Compensable, Journal, Saga } from "../src/index.js"

/** A memory journal that fails every write once `closed` is set, as a store closed under a run does. */
const closing = (closed: { value: boolean }) =>
  Layer.effect(
    Journal.Journal,
    Effect.map(Journal.Journal, (journal) => {
      const refused = (operation: string) =>
        Effect.fail(new Journal.JournalError({ operation, reason: "the store is closed" }))
      return {
        ...journal,
        append: (...args: Parameters<typeof journal.append>) =>
          closed.value ? refused("append") : journal.append(...args),
        release: (...args: Parameters<typeof journal.release>) =>
          closed.value ? refused("release") : journal.release(...args)
      }
    })
  ).pipe(Layer.provide(Journal.layerMemory))

/** Each line logged, as its level and its messages (several are shown apart, with ` | `). */
const keeping = (lines: Array<string>) =>
  Logger.replace(
    Logger.defaultLogger,
    Logger.make(({ logLevel, message }) => {
      lines.push(`${logLevel.label} ${(Array.isArray(message) ? message : [message]).map(String).join(" | ")}`)
    })
  )

describe("a lease the journal could not release", () => {
  it.effect("is logged as one message: what will happen, then why, after a colon", () => {
    const lines: Array<string> = []
    const closed = { value: false }
    // The store closes while the step runs: its outcome cannot be journaled, nor the lease released.
    const closes = Compensable.make({
      name: "closes",
      input: Schema.Struct({}),
      success: Schema.String,
      execute: () => Effect.sync(() => (closed.value = true)).pipe(Effect.as("done")),
      compensate: () => Effect.void
    })
    return Effect.gen(function* () {
      yield* Effect.exit(Saga.run("closing", closes({})))
      expect(lines).toContain(
        "WARN effect-saga: the lease of saga closing was not released; it will lapse: journal release failed: the store is closed"
      )
    }).pipe(
      Effect.provide(Saga.layer.pipe(Layer.provideMerge(Layer.merge(closing(closed), Approval.layerMemory)))),
      Effect.provide(keeping(lines))
    )
  })

  it.effect("a worker's leases left unreleased when its service closes: one message, the reason after a colon", () => {
    const lines: Array<string> = []
    const closed = { value: false }
    return Effect.gen(function* () {
      // The store closes before the worker does: its leases cannot be released.
      yield* Effect.scoped(
        Effect.zipRight(
          Layer.build(Saga.layer.pipe(Layer.provideMerge(Layer.merge(closing(closed), Approval.layerMemory)))),
          Effect.sync(() => (closed.value = true))
        )
      )
      expect(lines).toContain("WARN effect-saga: leases were not released: journal release failed: the store is closed")
    }).pipe(Effect.provide(keeping(lines)))
  })
})
