import { assert, describe, expect, it } from "@effect/vitest"
import { Journal } from "../src/index.js"
import { suite } from "./JournalSuite.js"

suite("layerMemory", Journal.layerMemory)

describe("Journal.verifyAgainst", () => {
  it("a row whose revision was edited below 1 breaks the chain at seq 1, never at a seq no entry has", () => {
    const at = "2024-01-01T00:00:00.000Z"
    const content = { sagaId: "s", seq: 1, stepId: null, toolName: null, phase: "SAGA_STARTED" as const, input: null }
    const first = { ...content, payload: null, at }
    const entries = [{ ...first, hash: Journal.hashEntry(Journal.empty.digest, first) }]
    const record = { sagaId: "s", status: "running" as const, createdAt: at, updatedAt: at, lease: null }
    for (const revision of [-5, 0]) {
      const verification = Journal.verifyAgainst(entries, { ...record, revision, digest: entries[0]!.hash })
      expect(verification).toMatchObject({ _tag: "Broken", seq: 1, problem: "row" })
    }
  })

  it("a row that ends before its journal says whether it names one of its entries or none", () => {
    const at = "2024-01-01T00:00:00.000Z"
    const draft = (seq: number) => ({ sagaId: "s", seq, stepId: null, toolName: null, input: null, payload: null, at })
    const first = { ...draft(1), phase: "SAGA_STARTED" as const }
    const firstHash = Journal.hashEntry(Journal.empty.digest, first)
    const second = { ...draft(2), phase: "SAGA_SUSPENDED" as const }
    const entries = [
      { ...first, hash: firstHash },
      { ...second, hash: Journal.hashEntry(firstHash, second) }
    ]
    const record = { sagaId: "s", status: "suspended" as const, createdAt: at, updatedAt: at, lease: null }
    const added = Journal.verifyAgainst(entries, { ...record, revision: 1, digest: firstHash })
    expect(added).toMatchObject({ _tag: "Broken", seq: 2, problem: "row" })
    assert(added._tag === "Broken")
    expect(added.reason).toContain("goes on to seq 2: entries were added behind the library's back")
    const lowered = Journal.verifyAgainst(entries, { ...record, revision: -5, digest: entries[1]!.hash })
    assert(lowered._tag === "Broken")
    expect(lowered.reason).toContain("the row was edited (no entry at seq -5 has its hash)")
  })
})
