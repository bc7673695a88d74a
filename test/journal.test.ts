import { describe, expect, it } from "@effect/vitest"
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
})
