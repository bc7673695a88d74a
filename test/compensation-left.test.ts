/**
 * What is left of a saga whose compensation failed is one decision (`util/compensationLeft.ts`), read
 * by `effect-saga show`'s `next:` lines and the console's saga page alike: the same steps, whether
 * a step's `undo` says none as the engine does (`undefined`) or as the HTTP API does (`null`).
 */
import { describe, expect, it } from "@effect/vitest"
import * as CompensationLeft from "../src/internal/util/compensationLeft.js"

const failed = { status: "compensation_failed", lease: null } as const
const NOW = Date.parse("2026-01-01T00:00:00Z")

/** The same steps with no undo asked for said as the engine says it, and as the HTTP API does. */
const bothWays = (steps: ReadonlyArray<{ stepId: string; state: string; undo?: string }>) => [
  steps.map((step) => ({ ...step, undo: step.undo })),
  steps.map((step) => ({ ...step, undo: step.undo ?? null }))
]

describe("what a compensation that failed left", () => {
  it("the undos a compensation again runs, in the order it runs them, and what is undone by hand", () => {
    for (const steps of bothWays([
      { stepId: "reserve", state: "executed" },
      { stepId: "charge", state: "executed", undo: "failed" },
      { stepId: "ship", state: "executed", undo: "unavailable" },
      { stepId: "notify", state: "failed" }
    ])) {
      expect(CompensationLeft.of(failed, steps, NOW)).toEqual({
        undoable: ["ship", "reserve"],
        byHand: [{ stepId: "charge", undo: "failed" }],
        toAsk: [],
        ofRuns: [],
        clean: false
      })
    }
  })

  it("nothing left dirty once no undo is owed and no step is unknown; not clean while one is", () => {
    const done = [{ stepId: "reserve", state: "executed", undo: "completed" }]
    for (const steps of bothWays(done)) {
      expect(CompensationLeft.of(failed, steps, NOW)).toEqual({
        undoable: [],
        byHand: [],
        toAsk: [],
        ofRuns: [],
        clean: true
      })
    }
    for (const steps of bothWays([...done, { stepId: "charge", state: "unknown" }])) {
      expect(CompensationLeft.of(failed, steps, NOW)?.clean).toBe(false)
    }
  })

  it("no advice for a saga that did not end compensation_failed, or that a live lease's worker holds", () => {
    const steps = [{ stepId: "reserve", state: "executed", undo: undefined }]
    expect(CompensationLeft.of({ status: "compensated", lease: null }, steps, NOW)).toBeUndefined()
    const held = { owner: "w1", expiresAt: "2026-01-01T00:01:00.000Z" }
    expect(CompensationLeft.of({ ...failed, lease: held }, steps, NOW)).toBeUndefined()
  })

  it("a read is never an undo to run, nor its unknown outcome a step to resolve", () => {
    for (const steps of bothWays([
      { stepId: "checkStock", state: "executed" },
      { stepId: "lookUp", state: "unknown" },
      { stepId: "reserve", state: "executed", undo: "completed" }
    ])) {
      const reads = steps.map((step) => ({ ...step, changesNothing: step.stepId !== "reserve" }))
      expect(CompensationLeft.of(failed, reads, NOW)).toEqual({
        undoable: [],
        byHand: [],
        toAsk: [],
        ofRuns: [],
        clean: true
      })
    }
  })

  it("an undo that answered unknown is asked about, not called left live", () => {
    for (const steps of bothWays([{ stepId: "charge", state: "executed", undo: "unknown" }])) {
      expect(CompensationLeft.of(failed, steps, NOW)).toEqual({
        undoable: [],
        byHand: [],
        toAsk: [{ stepId: "charge", undo: "unknown" }],
        ofRuns: [],
        clean: false
      })
    }
    expect(CompensationLeft.mayBeLive("o-1", [{ stepId: "charge", undo: "unknown" }])).toBe(
      "whether this undo happened: charge (undo unknown, key o-1/charge/undo); if it did not, undo its effect by hand (if it did, nothing is left live)"
    )
  })

  it("an unknown taken over from an explicit undo is its run's to settle, not the provider's to be asked about", () => {
    for (const undoDetail of [
      "by compensateEffect: no answer",
      "an explicit compensation of this effect has no outcome yet"
    ]) {
      const steps = [{ stepId: "charge", state: "executed", undo: "unknown", undoDetail }]
      expect(CompensationLeft.of(failed, steps, NOW)).toEqual({
        undoable: [],
        byHand: [],
        toAsk: [],
        ofRuns: ["charge"],
        clean: false
      })
    }
    // A partial taken over too: its run is closed once the rest is undone by hand; never the saga's key.
    const partial = [
      { stepId: "charge", state: "executed", undo: "partial", undoDetail: "by compensateEffect: 1 of 2 left" },
      { stepId: "book", state: "executed", undo: "partial", undoDetail: "2 of 3 nights released" }
    ]
    expect(CompensationLeft.of(failed, partial, NOW)).toEqual({
      undoable: [],
      byHand: [{ stepId: "book", undo: "partial" }],
      toAsk: [],
      ofRuns: ["charge"],
      clean: false
    })
    expect(CompensationLeft.followRuns("o-1", ["charge"])).toBe(
      "the undo of charge ran as an explicit undo, whose unknown or partial answer the saga's compensation took over: where the run still needs attention, or was partial (undo what it left live by hand), resolve it there first (effect-saga show o-1/charge/compensate-effect says how); then compensate the saga again, which follows its run: an undo completed it takes over, one that failed or was closed as not undone it runs itself (key o-1/charge/undo)"
    )
  })

  it("says how to tell effect-saga an effect is undone: one step at its position, several one at a time", () => {
    const at = "--revision 9 --digest abc"
    expect(CompensationLeft.resolveUndone("o-1", [{ stepId: "charge", undo: "failed" }], at)).toBe(
      "effect-saga resolve o-1 charge --applied --as WHO --revision 9 --digest abc"
    )
    expect(
      CompensationLeft.resolveUndone(
        "o-1",
        [
          { stepId: "charge", undo: "failed" },
          { stepId: "ship", undo: "unknown" }
        ],
        at
      )
    ).toBe(
      "effect-saga resolve o-1 STEP --applied --as WHO for each of charge, ship (each at the position the saga moved to: effect-saga show o-1 prints it)"
    )
    // One step, while another line names another undo: resolving either moves the saga, so no position is printed.
    expect(CompensationLeft.resolveUndone("o-1", [{ stepId: "charge", undo: "failed" }], at, true)).toBe(
      "effect-saga resolve o-1 charge --applied --as WHO (at the position the saga moved to: effect-saga show o-1 prints it)"
    )
  })

  it("names what was left live with each undo's key, one or several", () => {
    expect(CompensationLeft.leftLive("o-1", [{ stepId: "charge", undo: "partial" }])).toBe(
      "this undo left live: charge (undo partial, key o-1/charge/undo)"
    )
    expect(
      CompensationLeft.leftLive("o-1", [
        { stepId: "charge", undo: "failed" },
        { stepId: "ship", undo: "partial" }
      ])
    ).toBe("these undos left live: charge (undo failed, key o-1/charge/undo), ship (undo partial, key o-1/ship/undo)")
  })
})
