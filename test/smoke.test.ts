import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { Compensable, Journal, Saga } from "../src/index.js"
import * as Testing from "../src/Testing.js"

const log: Array<string> = []
const reserve = Compensable.make({
  name: "reserve",
  input: Schema.Struct({ sku: Schema.String }),
  success: Schema.String,
  execute: ({ sku }) => Effect.sync(() => { log.push(`reserve ${sku}`); return `res-${sku}` }),
  compensate: (ctx) => Effect.sync(() => { log.push(`release ${ctx.result}`) })
})
const charge = Compensable.make({
  name: "charge",
  input: Schema.Struct({ amount: Schema.Number }),
  success: Schema.String,
  failure: Schema.String,
  execute: ({ amount }) => amount > 100 ? Effect.fail("declined") : Effect.succeed("ch-1"),
  compensate: () => Effect.sync(() => { log.push("refund") })
})

describe("smoke", () => {
  it.effect("runs and compensates", () =>
    Effect.gen(function* () {
      const ok = yield* Saga.run("s1", Effect.zip(reserve({ sku: "A" }), charge({ amount: 5 })))
      expect(ok._tag).toBe("Completed")
      const bad = yield* Saga.run("s2", Effect.zip(reserve({ sku: "B" }), charge({ amount: 500 })))
      expect(bad._tag).toBe("Compensated")
      const journal = yield* Journal.Journal
      const entries = yield* journal.read("s2")
      console.log(entries.map((e) => `${e.seq} ${e.phase} ${e.stepId} ${e.payload}`).join("\n"))
      console.log(log)
      expect(Journal.verifyEntries(entries)._tag).toBe("Intact")
    }).pipe(Effect.provide(Testing.layer)))
})
