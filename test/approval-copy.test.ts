/**
 * `Approval.journaledRequest`: a pending request as its saga's journal holds it, and how the
 * approvals table's copy departs from it (what the HTTP API and the CLI show a person deciding).
 */
import { describe, expect, it } from "@effect/vitest"
import type { Journal } from "../src/index.js"
import { Approval } from "../src/index.js"

const entry = (seq: number, stepId: string, input: string, payload: string): Journal.Entry => ({
  sagaId: "order-1",
  seq,
  stepId,
  toolName: "wire",
  phase: "AWAITING_APPROVAL",
  input,
  payload,
  at: "2026-12-02T09:00:00.000Z",
  hash: "0".repeat(64)
})

const request: Approval.ApprovalRequest = {
  requestId: "req-1",
  sagaId: "order-1",
  stepId: "wire:1",
  toolName: "wire",
  input: '{"amount":10}',
  inputDigest: "d-10",
  requestedAt: "2026-12-02T09:00:00.000Z"
}

describe("Approval.journaledRequest", () => {
  it("a copy that is the journal's: its input and digest, no problem", () => {
    const entries = [entry(2, "wire:1", '{"amount":10}', '{"inputDigest":"d-10"}')]
    expect(Approval.journaledRequest(request, entries)).toEqual({
      input: '{"amount":10}',
      inputDigest: "d-10",
      problem: null
    })
  })

  it("an edited copy: the journal's input and digest (the step's last request), marked at its seq", () => {
    const entries = [
      entry(2, "wire:1", '{"amount":1}', '{"inputDigest":"d-1"}'),
      entry(5, "other:1", '{"amount":10}', '{"inputDigest":"d-10"}'),
      entry(7, "wire:1", '{"amount":5}', '{"inputDigest":"d-5"}')
    ]
    const journaled = Approval.journaledRequest(request, entries)
    expect(journaled).toMatchObject({
      input: '{"amount":5}',
      inputDigest: "d-5",
      problem: { seq: 7, problem: "approval" }
    })
    expect(journaled.problem?.reason).toContain("the table was edited")
  })

  it("a digest edited alone is marked too", () => {
    const entries = [entry(2, "wire:1", '{"amount":10}', '{"inputDigest":"d-other"}')]
    expect(Approval.journaledRequest(request, entries).problem).toMatchObject({ seq: 2, problem: "approval" })
  })

  it("a tool or a time of request edited in the copy is marked, with the journal's", () => {
    const entries = [entry(2, "wire:1", '{"amount":10}', '{"inputDigest":"d-10"}')]
    for (const edited of [{ toolName: "refundCustomer" }, { requestedAt: "2001-01-01T00:00:00.000Z" }]) {
      const problem = Approval.journaledRequest({ ...request, ...edited }, entries).problem
      expect(problem).toMatchObject({ seq: 2, problem: "approval" })
      expect(problem?.reason).toContain("(tool wire, requested 2026-12-02T09:00:00.000Z): the table was edited")
    }
  })

  it("no entry backs it: nothing to show, marked with no seq", () => {
    const journaled = Approval.journaledRequest(request, [])
    expect(journaled).toMatchObject({ input: null, inputDigest: null, problem: { seq: null, problem: "approval" } })
  })

  it("the entry's payload does not decode: its input, no digest, marked undecodable", () => {
    const entries = [entry(3, "wire:1", '{"amount":10}', "not json")]
    expect(Approval.journaledRequest(request, entries)).toMatchObject({
      input: '{"amount":10}',
      inputDigest: null,
      problem: { seq: 3, problem: "undecodable" }
    })
  })
})
