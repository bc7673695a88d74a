/**
 * The console's sequence diagram draws each label in the room its arrow has: a label cut short keeps
 * its whole text as the group's SVG title (a tooltip, and text on the page), escaped as the page is.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { Compensable, Journal, Outcome, Saga } from "../src/index.js"
import { svg } from "../src/internal/http/console/diagram.js"
import * as Testing from "../src/Testing.js"

const reason = `the warehouse refused <order 7> & said so at length: ${"no stock left ".repeat(4)}`

const ship = Compensable.make({
  name: "ship",
  input: Schema.String,
  success: Schema.String,
  execute: () => Effect.fail(Outcome.failed(reason))
})

describe("the console's sequence diagram", () => {
  it.effect("a label cut short keeps its whole text, escaped, as its group's title; one that fits has none", () =>
    Effect.gen(function* () {
      yield* Saga.run("d-1", ship("o-7"))
      const entries = yield* Effect.flatMap(Journal.Journal, (journal) => journal.read("d-1"))
      const drawn = svg("d-1", entries, undefined)
      const whole = `failed: failed (not applied): ${reason.trim().replace(/\s+/g, " ")}`
      const escaped = whole.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;")
      expect(drawn).toContain(`<g><title>${escaped}</title><line`)
      expect(drawn).toMatch(
        /<title>failed: [^<]*<\/title><line[^>]*\/><polygon[^>]*\/><text[^>]*>failed: [^<]*…<\/text>/
      )
      // The call's label fits its arrow: drawn whole, no title.
      expect(drawn).toMatch(/<g><line[^>]*\/><polygon[^>]*\/><text[^>]*>call: &quot;o-7&quot;<\/text><\/g>/)
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("a participant's name cut short (the saga's id) keeps its whole text, escaped, as its group's title", () =>
    Effect.gen(function* () {
      const sagaId = `trip-1/bookRoom:b8c49cd317ccfaab#1/<undo> & more`
      yield* Saga.run(sagaId, ship("o-7"))
      const entries = yield* Effect.flatMap(Journal.Journal, (journal) => journal.read(sagaId))
      const drawn = svg(sagaId, entries, undefined)
      expect(drawn).toMatch(
        /<g><title>saga trip-1\/bookRoom:b8c49cd317ccfaab#1\/&lt;undo&gt; &amp; more<\/title><rect[^>]*\/><text[^>]*>saga trip-1\/bookRoom:b8…<\/text>/
      )
      // The tool's name fits: drawn whole, no title.
      expect(drawn).toMatch(/<g><rect[^>]*\/><text[^>]*>ship<\/text>/)
    }).pipe(Effect.provide(Testing.layer))
  )
})
