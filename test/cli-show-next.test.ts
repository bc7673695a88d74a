/**
 * `show`'s `next:` lines, followed as printed: each names a command the CLI accepts (run here with
 * its placeholders filled in) and says what it does. A step awaiting approval gets one line to
 * approve it and one to reject it; an explicit undo's run gets its own; undos are named in the
 * order they run. The CLI runs in this process, on an SQLite file, at the test's clock.
 */
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, assert, describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect } from "effect"
import { Approval, Journal, Saga, SqlStore } from "../src/index.js"
import { cliInProcess as cli } from "./fixtures/cli-in-process.js"
import { chargeCard, Payout, reserveInventory, sendWireTransfer } from "./fixtures/cli-tools.js"
import { gatedRelease, partialRelease, refusedRefund, silentRelease } from "./fixtures/cli-undo-tools.js"
import { edit } from "./fixtures/sqlite-raw.js"
import { onFile } from "./fixtures/worker-on-file.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-cli-next-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))
const tools = fileURLToPath(new URL("./fixtures/cli-undo-tools.ts", import.meta.url))

let files = 0
const freshFile = () => path.join(dir, `${++files}.db`)

const nextLines = (db: string, sagaId: string) =>
  Effect.map(cli("show", sagaId, "--db", db), (shown) =>
    shown.stdout.split("\n").filter((line) => line.startsWith("next: "))
  )

const position = (db: string, sagaId: string) =>
  Effect.map(onFile(db, Saga.status(sagaId)), (status) => `--revision ${status.revision} --digest ${status.digest}`)

/** The command a `next:` line prints (the words `effect-saga` starts, up to `end`), run with its placeholders filled in. */
const runAsPrinted = (db: string, line: string, end: RegExp) => {
  const printed = line.slice(line.indexOf("effect-saga ") + "effect-saga ".length)
  const command = printed.slice(0, printed.search(end))
  const args = command.split(" ").map((word) => (word === "MODULE" ? tools : word === "WHO" ? "oncall" : word))
  return cli(...args, "--db", db)
}
const AT_END = /(?<=--digest \w+)(?!\w)/

/** How a `next:` line of a run that ended compensation_failed says to close it (at the run's position `at`). */
const closing = (run: string, stepId: string, at: string, keep: boolean) =>
  `asking again runs nothing, and the run stays compensation_failed until it is closed: once the effect is undone, effect-saga resolve ${run} ${stepId} --applied --as WHO ${at}${keep ? `; to keep the effect as it is (as decided), close it so: effect-saga resolve ${run} ${stepId} --not-applied --as WHO ${at}` : ""}`

/** The printed line from `words` on, to run the command that follows them. */
const from = (line: string, words: string) => line.slice(line.indexOf(words))
const ORDER = (sagaId: string, db: string) =>
  Effect.map(
    onFile(
      db,
      Effect.flatMap(Journal.Journal, (journal) => journal.read(sagaId))
    ),
    (entries) => entries.filter((entry) => entry.phase === "COMPENSATED").map((entry) => entry.stepId)
  )

/** A saga that reserved, charged, and waits for its wire transfer's approval. */
const order = Effect.gen(function* () {
  yield* reserveInventory({ sku: "A-1", quantity: 1 })
  yield* chargeCard({ amount: 5 })
  yield* sendWireTransfer({ amount: 5, to: "acme" })
})

/** A one-step saga of `tool`, completed, whose step's explicit undo was asked for by the CLI: the step and the run's id. */
const undoAsked = (db: string, sagaId: string, tool: typeof gatedRelease | typeof silentRelease) =>
  Effect.gen(function* () {
    assert((yield* onFile(db, Saga.run(sagaId, tool(sagaId))))._tag === "Completed")
    const step = (yield* onFile(db, Saga.status(sagaId))).steps[0]!
    yield* cli("compensate-effect", step.effectId, "--register", tools, "--as", "oncall", "--db", db)
    return { step, run: `${step.effectId}/compensate-effect` }
  })

/** The CLI's `compensate` of `sagaId`, with the tools, at its position now. */
const compensateNow = (db: string, sagaId: string) =>
  Effect.flatMap(position(db, sagaId), (at) =>
    cli("compensate", sagaId, "--register", tools, "--as", "oncall", ...at.split(" "), "--db", db)
  )

describe("effect-saga show: its next lines, run as printed", { timeout: 60_000 }, () => {
  it.scoped("a step awaiting approval: approve, then resume; or reject with the tools, which compensates now", () =>
    Effect.gen(function* () {
      const db = freshFile()
      for (const sagaId of ["a-1", "a-2"])
        assert((yield* onFile(db, Saga.run(sagaId, order)))._tag === "AwaitingApproval")
      const steps = (yield* onFile(db, Saga.status("a-1"))).steps
      const [reserve, charge, wire] = steps.map((step) => step.stepId)
      const lines = yield* nextLines(db, "a-1")
      expect(lines).toEqual([
        `next: effect-saga approve a-1 ${wire} --as WHO ${yield* position(db, "a-1")}, then resume the saga, by the program that started it, run again under its id: Saga.resume("a-1", program) or Saga.run`,
        `next: or effect-saga reject a-1 ${wire} --register MODULE --as WHO ${yield* position(db, "a-1")}, MODULE exporting their tools (and the receipt keys set, if their receipts are sealed): the saga compensates now, in that command: it runs the undo of ${charge}, ${reserve}; nothing is left to resume`
      ])

      // As printed: the rejection compensates the saga there and then, the undos in the order named.
      const rejected = yield* runAsPrinted(db, lines[1]!, AT_END)
      expect(rejected.code).toBe(0)
      expect((yield* onFile(db, Saga.status("a-1"))).status).toBe("compensated")
      expect(yield* ORDER("a-1", db)).toEqual([charge, reserve])
      expect(yield* nextLines(db, "a-1")).toEqual([])

      const approveLine = (yield* nextLines(db, "a-2"))[0]!
      expect((yield* runAsPrinted(db, approveLine, AT_END)).code).toBe(0)
      expect((yield* onFile(db, Saga.status("a-2"))).steps[2]!.state).toBe("approved")
    })
  )

  it.scoped(
    "a saga started from a definition, with no undo to run: resumed by its definition's worker; rejected with no tools",
    () =>
      Effect.gen(function* () {
        const db = freshFile()
        assert((yield* onFile(db, Saga.start(Payout, "p-1", { amount: 5 })))._tag === "AwaitingApproval")
        const wire = (yield* onFile(db, Saga.status("p-1"))).steps[0]!.stepId
        const at = yield* position(db, "p-1")
        const lines = yield* nextLines(db, "p-1")
        expect(lines).toEqual([
          `next: effect-saga approve p-1 ${wire} --as WHO ${at}, then resume the saga, by a worker given definition payout: Recovery.resume("p-1"), or Saga.start with payout`,
          `next: or effect-saga reject p-1 ${wire} --as WHO ${at}: the saga compensates now, in that command (no executed step has an undo to run); nothing is left to resume`
        ])
        expect((yield* runAsPrinted(db, lines[1]!, AT_END)).code).toBe(0)
        expect((yield* onFile(db, Saga.status("p-1"))).status).toBe("compensated")
      })
  )
  it.scoped("an explicit undo awaiting its own approval: approve, then ask compensate-effect again; or reject", () =>
    Effect.gen(function* () {
      const db = freshFile()
      for (const sagaId of ["g-1", "g-2"])
        assert((yield* onFile(db, Saga.run(sagaId, gatedRelease(sagaId))))._tag === "Completed")
      const step = (yield* onFile(db, Saga.status("g-1"))).steps[0]!
      const asked = yield* cli("compensate-effect", step.effectId, "--register", tools, "--as", "oncall", "--db", db)
      expect(asked.code).toBe(1)
      const run = `${step.effectId}/compensate-effect`
      const at = yield* position(db, run)
      const lines = yield* nextLines(db, run)
      expect(lines).toEqual([
        `next: effect-saga approve ${run} ${step.stepId} --as WHO ${at}, then ask again: effect-saga compensate-effect ${step.effectId} --register MODULE`,
        `next: or effect-saga reject ${run} ${step.stepId} --as WHO ${at} (the undo never runs, and the run ends compensation_failed: the effect stays live, and the saga's own compensation handles it as if nobody had asked)`
      ])
      // As printed: approved, then asked again (nothing resumes a run: no Recovery.resume), the undo runs.
      const approvedNow = yield* runAsPrinted(db, lines[0]!, AT_END)
      expect(approvedNow.code).toBe(0)
      // Nothing resumes a run: `approve` says how its undo runs, as `show` does.
      expect(approvedNow.stdout).toBe(
        `approved step ${step.stepId} of saga ${run} as oncall: journaled APPROVED; the undo runs when it is asked for again (nothing resumes a run): effect-saga compensate-effect ${step.effectId} --register MODULE`
      )
      const approved = yield* nextLines(db, run)
      expect(approved).toEqual([
        `next: ${step.stepId} is approved: the undo runs when it is asked for again (nothing resumes a run): effect-saga compensate-effect ${step.effectId} --register MODULE`
      ])
      const again = yield* runAsPrinted(db, approved[0]!, /$/)
      expect(again.stdout).toBe(`${step.effectId}: completed; journaled as ${run}`)
      expect(again.code).toBe(0)
      expect(yield* nextLines(db, run)).toEqual([])

      // Rejected as printed: the run is compensation_failed until an operator closes it.
      const other = (yield* onFile(db, Saga.status("g-2"))).steps[0]!
      yield* cli("compensate-effect", other.effectId, "--register", tools, "--as", "oncall", "--db", db)
      const otherRun = `${other.effectId}/compensate-effect`
      const rejected = yield* runAsPrinted(db, (yield* nextLines(db, otherRun))[1]!, AT_END)
      expect(rejected.stderr).toBe("")
      expect((yield* onFile(db, Saga.status(otherRun))).status).toBe("compensation_failed")
      // The run's answer is the step's undo: the table shows it.
      expect((yield* cli("show", otherRun, "--db", db)).stdout).toMatch(/ refused {2}failed\n/)
      const left = yield* nextLines(db, otherRun)
      expect(left).toEqual([
        `next: the effect ${other.effectId} is still live: undo it by hand, at the provider, or compensate the saga, which runs its undo as if nobody had asked (key g-2/${other.stepId}/undo) and undoes every other executed step too: effect-saga compensate g-2 --register MODULE --as WHO ${yield* position(db, "g-2")}; ${closing(otherRun, other.stepId, yield* position(db, otherRun), true)}`
      ])
      // Kept as decided, as printed: the run is closed (completed), and show has nothing left to say.
      const kept = yield* runAsPrinted(db, from(left[0]!, "close it so: "), AT_END)
      expect(kept.code, kept.stderr).toBe(0)
      expect(kept.stdout).toBe(
        `resolved the undo of step ${other.stepId} in run ${otherRun} as not undone (oncall); the run answers failed and is closed: the effect stays in place (the saga's own compensation runs its undo, unless it settled the step already)`
      )
      expect((yield* onFile(db, Saga.status(otherRun))).status).toBe("completed")
      expect((yield* cli("show", otherRun, "--db", db)).code).toBe(0)
      expect(yield* nextLines(db, otherRun)).toEqual([])
    })
  )

  it.scoped(
    "an explicit undo awaiting approval whose effect the saga's compensation undid since: nothing to approve; asked again, the run answers and withdraws its request",
    () =>
      Effect.gen(function* () {
        const db = freshFile()
        const { step, run } = yield* undoAsked(db, "w-1", gatedRelease)
        const compensated = yield* compensateNow(db, "w-1")
        expect(compensated.code, compensated.stderr).toBe(0)
        const lines = yield* nextLines(db, run)
        expect(lines).toEqual([
          `next: the saga's own compensation has reached ${step.stepId} since (undo completed): nothing is left to approve; asked again, the run answers that and withdraws this request: effect-saga compensate-effect ${step.effectId} --register MODULE`
        ])
        // The inbox says it too, under its table, and in its JSON (`settled`).
        const inbox = yield* cli("approvals", "--db", db)
        expect(inbox.code).toBe(0)
        expect(inbox.stdout.split("\n").at(-1)).toBe(`${run} ${step.stepId}: ${lines[0]!.slice("next: ".length)}`)
        const listed = JSON.parse((yield* cli("approvals", "--json", "--db", db)).stdout)
        expect(listed.map((request: { settled: string | null }) => request.settled)).toEqual([
          lines[0]!.slice("next: ".length)
        ])
        const again = yield* runAsPrinted(db, lines[0]!, /$/)
        expect(again.stdout).toBe(
          `${step.effectId}: completed (settled by the saga's compensation); journaled as ${run}`
        )
        expect(yield* nextLines(db, run)).toEqual([])
        expect((yield* cli("approvals", "--db", db)).stdout).toBe("no approvals pending")
        const runStatus = yield* onFile(db, Saga.status(run))
        const approve = yield* cli(
          "approve",
          run,
          step.stepId,
          "--as",
          "alice",
          "--revision",
          String(runStatus.revision),
          "--digest",
          runStatus.digest,
          "--db",
          db
        )
        expect(approve.code).toBe(2)
        expect(approve.stderr).toContain(
          "was already withdrawn: the saga's own compensation settled this effect before its undo was approved"
        )
      })
  )

  it.scoped(
    "an explicit undo approved, then overtaken by the saga's compensation: show says the approved undo will not run; asked again, the run answers the saga's",
    () =>
      Effect.gen(function* () {
        const db = freshFile()
        const { step, run } = yield* undoAsked(db, "w-2", gatedRelease)
        const approved = yield* runAsPrinted(db, (yield* nextLines(db, run))[0]!, AT_END)
        expect(approved.code, approved.stderr).toBe(0)
        const compensated = yield* compensateNow(db, "w-2")
        expect(compensated.code, compensated.stderr).toBe(0)
        const lines = yield* nextLines(db, run)
        expect(lines).toEqual([
          `next: the saga's own compensation has reached ${step.stepId} since (undo completed): the approved undo will not run; asked again, the run answers that: effect-saga compensate-effect ${step.effectId} --register MODULE`
        ])
        const again = yield* runAsPrinted(db, lines[0]!, /$/)
        expect(again.stdout).toBe(
          `${step.effectId}: completed (settled by the saga's compensation); journaled as ${run}`
        )
        expect(yield* nextLines(db, run)).toEqual([])
      })
  )

  it.scoped(
    "a compensation that took over an explicit undo's unknown answer: its run first, then compensate again, which follows it (never the provider asked about the saga's key)",
    () =>
      Effect.gen(function* () {
        const db = freshFile()
        const { step, run } = yield* undoAsked(db, "u-1", silentRelease)
        yield* compensateNow(db, "u-1")
        const taken = (yield* onFile(db, Saga.status("u-1"))).steps[0]!
        expect(taken).toMatchObject({ undo: "unknown", undoDetail: "by compensateEffect: the carrier did not answer" })
        const follow = (position: string) => [
          `next: the undo of ${step.stepId} ran as an explicit undo, whose unknown or partial answer the saga's compensation took over: where the run still needs attention, or was partial (undo what it left live by hand), resolve it there first (effect-saga show ${run} says how); then compensate the saga again, which follows its run: an undo completed it takes over, one that failed or was closed as not undone it runs itself (key u-1/${step.stepId}/undo): effect-saga compensate u-1 --register MODULE --as WHO ${position}`
        ]
        expect(yield* nextLines(db, "u-1")).toEqual(follow(yield* position(db, "u-1")))
        // Closed as not undone in its run: the same line, and compensating as printed runs the undo itself.
        const closed = yield* cli("resolve", run, step.stepId, "--not-applied", "--as", "oncall", "--db", db)
        expect(closed.code, closed.stderr).toBe(0)
        const lines = yield* nextLines(db, "u-1")
        expect(lines).toEqual(follow(yield* position(db, "u-1")))
        const compensated = yield* runAsPrinted(db, from(lines[0]!, "effect-saga compensate"), AT_END)
        expect(compensated.code, compensated.stderr).toBe(1)
        const own = (yield* onFile(db, Saga.status("u-1"))).steps[0]!
        expect(own).toMatchObject({ undo: "unknown", undoDetail: "the carrier did not answer" })
        // Now the saga's own undo is unknown: the provider is asked about the saga's key.
        expect((yield* nextLines(db, "u-1"))[0]).toMatch(
          new RegExp(
            `^next: ask the provider whether this undo happened: ${step.stepId.replace(/[#:]/g, ".")} \\(undo unknown, key u-1/`
          )
        )
      })
  )

  it.scoped(
    "an explicit undo that failed: the effect is still live: by hand, or the saga's compensation at the saga's position; the run stays failed",
    () =>
      Effect.gen(function* () {
        const db = freshFile()
        const program = Effect.zipRight(reserveInventory({ sku: "F-1", quantity: 1 }), refusedRefund("f-1"))
        assert((yield* onFile(db, Saga.run("f-1", program)))._tag === "Completed")
        const refund = (yield* onFile(db, Saga.status("f-1"))).steps[1]
        const asked = yield* cli(
          "compensate-effect",
          refund!.effectId,
          "--register",
          tools,
          "--as",
          "oncall",
          "--db",
          db
        )
        expect(asked.stdout).toContain(": failed (")
        const run = `${refund!.effectId}/compensate-effect`
        const shown = yield* cli("show", run, "--db", db)
        expect(shown.code).toBe(1)
        const lines = yield* nextLines(db, run)
        expect(lines).toEqual([
          `next: the effect ${refund!.effectId} is still live: undo it by hand, at the provider, or compensate the saga, which runs its undo as if nobody had asked (key f-1/${refund!.stepId}/undo) and undoes every other executed step too: effect-saga compensate f-1 --register MODULE --as WHO ${yield* position(db, "f-1")}; ${closing(run, refund!.stepId, yield* position(db, run), true)}`
        ])
        // As printed: the saga's compensation runs the undo with its own key (refused again here) and releases the reservation.
        const compensated = yield* runAsPrinted(db, lines[0]!, AT_END)
        expect(compensated.code).toBe(1)
        expect(compensated.stderr).toBe("")
        const saga = yield* onFile(db, Saga.status("f-1"))
        expect(saga.steps.map((step) => step.undo)).toEqual(["completed", "failed"])
        expect(yield* nextLines(db, run)).toEqual([
          `next: the saga's own compensation settled ${refund!.stepId} since (undo failed): effect-saga show f-1 says what is left; ${closing(run, refund!.stepId, yield* position(db, run), true)}`
        ])
      })
  )

  it.scoped(
    "an explicit undo that left part of the effect live: by hand; the saga's compensation takes it over as it is",
    () =>
      Effect.gen(function* () {
        const db = freshFile()
        assert((yield* onFile(db, Saga.run("h-1", partialRelease("h-1"))))._tag === "Completed")
        const step = (yield* onFile(db, Saga.status("h-1"))).steps[0]!
        yield* cli("compensate-effect", step.effectId, "--register", tools, "--db", db)
        const run = `${step.effectId}/compensate-effect`
        const lines = yield* nextLines(db, run)
        expect(lines).toEqual([
          `next: undo by hand, at the provider, what the undo left live: 2 of 3 seats still held (effect ${step.effectId}); the saga's own compensation takes this answer over and does not run the undo again; ${closing(run, step.stepId, yield* position(db, run), false)}`
        ])
        // Undone by hand, then closed as printed.
        const closed = yield* runAsPrinted(db, from(lines[0]!, "once the effect is undone, "), AT_END)
        expect(closed.stdout).toBe(
          `resolved the undo of step ${step.stepId} in run ${run} as undone (oncall); the run answers completed`
        )
        expect((yield* onFile(db, Saga.status(run))).status).toBe("completed")
      })
  )

  it.scoped("undos left unavailable are named in the order a compensation runs them: reverse order of execution", () =>
    Effect.gen(function* () {
      const db = freshFile()
      const waiting = yield* onFile(db, Saga.run("u-1", order))
      assert(waiting._tag === "AwaitingApproval")
      // Rejected in a process where the tools are not registered: both undos are unavailable.
      yield* onFile(db, Saga.reject("u-1", waiting.request.stepId, { by: "bob", reason: "no" }))
      const [reserve, charge] = (yield* onFile(db, Saga.status("u-1"))).steps.map((step) => step.stepId)
      const lines = yield* nextLines(db, "u-1")
      expect(lines).toEqual([
        `next: effect-saga compensate u-1 --register MODULE --as WHO ${yield* position(db, "u-1")}, from a process that has their tools registered (and the receipt keys, if their receipts are sealed): it runs the undo of ${charge}, ${reserve} and journals a new report`
      ])
      expect((yield* runAsPrinted(db, lines[0]!, AT_END)).code).toBe(0)
      expect(yield* ORDER("u-1", db)).toEqual([charge, reserve])
    })
  )

  it.scoped(
    "an agent's call that asked for approval without halting, its run still going on: wait first; the decisions are refused until it halts",
    () =>
      Effect.gen(function* () {
        const db = freshFile()
        // The journal of a conversation under way: its call of wire awaits approval, deferred, and its
        // worker goes on (the model's next turn) under a live lease.
        const input = '{"amount":5000}'
        const digest = createHash("sha256").update(input).digest("hex")
        yield* onFile(
          db,
          Effect.flatMap(Journal.Journal, (journal) =>
            journal.append(
              "talk-1",
              Journal.empty,
              [
                { stepId: null, toolName: null, phase: "SAGA_STARTED", input: null, payload: null },
                {
                  stepId: "sendWireTransfer:c3#1",
                  toolName: "sendWireTransfer",
                  phase: "AWAITING_APPROVAL",
                  input,
                  payload: JSON.stringify({ inputDigest: digest, deferred: true })
                }
              ],
              { owner: "agent-worker", ttlMillis: 60_000 }
            )
          )
        )
        const status = yield* onFile(db, Saga.status("talk-1"))
        expect(status.status).toBe("running")
        const lines = yield* nextLines(db, "talk-1")
        expect(lines[0]).toBe(
          `next: wait: agent-worker holds the saga's lease until ${status.lease!.expiresAt} while its program goes on (calls still in flight in concurrent branches, or an agent's call that asked for approval without halting): the approve and reject below are refused with LeaseHeld until the run halts awaiting approval (an agent's, before the model's final answer); if that worker died, the lease lapses then, and effect-saga show talk-1 says how to go on`
        )
        expect(lines[1]).toMatch(/^next: effect-saga approve talk-1 /)
        const approving = yield* runAsPrinted(db, lines[1]!, AT_END)
        expect(approving.code).toBe(2)
        expect(approving.stderr).toContain("agent-worker")
      })
  )

  it.scoped(
    "a step awaiting approval while a command holds the saga's lease: wait first; the decisions are refused until then",
    () =>
      Effect.gen(function* () {
        const db = freshFile()
        assert((yield* onFile(db, Saga.run("held-1", order)))._tag === "AwaitingApproval")
        const claimed = yield* onFile(
          db,
          Effect.flatMap(Journal.Journal, (journal) =>
            journal.claim("held-1", { owner: "cli-approve", ttlMillis: 60_000 })
          )
        )
        assert(claimed._tag === "Some" && claimed.value.lease !== null)
        const lines = yield* nextLines(db, "held-1")
        expect(lines[0]).toBe(
          `next: wait: cli-approve holds the saga's lease until ${claimed.value.lease.expiresAt} (a command, or an explicit undo of one of its steps, runs on it: the commands below are refused with LeaseHeld while it does); if that worker died, the lease lapses then, and effect-saga show held-1 says how to go on`
        )
        expect(lines[1]).toMatch(/^next: effect-saga approve held-1 /)
        const approving = yield* runAsPrinted(db, lines[1]!, AT_END)
        expect(approving.code).toBe(2)
        expect(approving.stderr).toContain("cli-approve")
      })
  )

  describe("a decision the approvals table holds and the journal lacks (a command stopped between its writes, or a forgery)", () => {
    /** Approves `sagaId`'s waiting request in the approval store alone, as an approve stopped between its two writes leaves it. */
    const storeOnly = (
      db: string,
      sagaId: string,
      config: ConfigProvider.ConfigProvider = ConfigProvider.fromMap(new Map())
    ) =>
      Effect.gen(function* () {
        const [request] = (yield* Approval.inboxOf(sagaId)).filter((waiting) => waiting.sagaId === sagaId)
        yield* Approval.approve(request!.requestId, { by: "alice", inputDigest: request!.inputDigest })
        return request!
      }).pipe(Effect.provide(SqlStore.layerSqlite({ filename: db })), Effect.scoped, Effect.withConfigProvider(config))

    /** An explicit undo's run awaiting approval, approved in the store alone: its id and step. */
    const halfApprovedRun = (db: string, sagaId: string) =>
      Effect.gen(function* () {
        const { step, run } = yield* undoAsked(db, sagaId, gatedRelease)
        yield* storeOnly(db, run)
        return { run, step }
      })

    it.scoped("an explicit undo's run: the same approve again finishes it, and the undo runs when asked again", () =>
      Effect.gen(function* () {
        const db = freshFile()
        const { run, step } = yield* halfApprovedRun(db, "h-1")
        const lines = yield* nextLines(db, run)
        expect(lines).toEqual([
          `next: ask alice first whether they made this decision (without a journal key, a forged row reads the same): if their approve stopped before journaling it (a crash, a journal write that failed), the same command again finishes it: effect-saga approve ${run} ${step.stepId} --as alice`,
          `next: if alice made no such decision, it was forged: restore the approvals table from a backup, or leave the effect to the saga's own compensation, which runs this undo as if nobody had asked and undoes every other executed step of h-1 too: effect-saga compensate h-1 --register MODULE --as WHO`
        ])
        const approved = yield* runAsPrinted(db, lines[0]!, /$/)
        expect(approved.code, approved.stderr).toBe(0)
        const again = yield* runAsPrinted(db, (yield* nextLines(db, run))[0]!, /$/)
        expect(again.stdout).toBe(`${step.effectId}: completed; journaled as ${run}`)
      })
    )

    it.scoped(
      "an explicit undo's run, forged: never compensate the run; the saga's own compensation undoes the effect",
      () =>
        Effect.gen(function* () {
          const db = freshFile()
          const { run, step } = yield* halfApprovedRun(db, "h-2")
          const forged = (yield* nextLines(db, run))[1]!
          expect(forged).not.toContain(`compensate ${run}`)
          const compensated = yield* runAsPrinted(db, forged, /$/)
          expect(compensated.code, compensated.stderr).toBe(0)
          expect((yield* onFile(db, Saga.status("h-2"))).status).toBe("compensated")
          const settled = yield* cli(
            "compensate-effect",
            step.effectId,
            "--register",
            tools,
            "--as",
            "oncall",
            "--db",
            db
          )
          expect(settled.stdout).toBe(
            `${step.effectId}: completed (settled by the saga's compensation); journaled as ${run}`
          )
        })
    )

    it.scoped("with a journal key, an unsigned decision is no stopped command's: show offers no approve again", () =>
      Effect.gen(function* () {
        const db = freshFile()
        const keyed = ConfigProvider.fromMap(
          new Map([["EFFECT_SAGA_JOURNAL_KEYS", `k1:${Buffer.alloc(32, 9).toString("base64")}`]])
        )
        const withKey = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.withConfigProvider(effect, keyed)
        const waiting = yield* withKey(onFile(db, Saga.run("h-3", order)))
        assert(waiting._tag === "AwaitingApproval")
        // Made where no key is configured: the decision carries no MAC.
        yield* Approval.approve(waiting.request.requestId, {
          by: "alice",
          inputDigest: waiting.request.inputDigest
        }).pipe(Effect.provide(SqlStore.layerSqlite({ filename: db })), Effect.scoped)
        const lines = yield* withKey(nextLines(db, "h-3"))
        expect(lines).toEqual([
          "next: restore the approvals table from a backup, or end the saga: effect-saga compensate h-3 --register MODULE --as WHO"
        ])
        const refused = yield* withKey(cli("approve", "h-3", waiting.request.stepId, "--as", "alice", "--db", db))
        expect(refused.code).toBe(1)
        expect(refused.stderr).toContain("carries no MAC under the journal key")
      })
    )

    it.scoped(
      "a row the approvals table lists as pending for a step its saga no longer waits on: approvals points to show, show says how to remove it, and once removed both are clean",
      () =>
        Effect.gen(function* () {
          const db = freshFile()
          const waiting = yield* onFile(db, Saga.run("h-4", order))
          assert(waiting._tag === "AwaitingApproval")
          expect((yield* cli("compensate", "h-4", "--register", tools, "--as", "oncall", "--db", db)).code).toBe(0)
          // Someone sets the withdrawn request's row back to pending behind the library's back.
          edit(
            db,
            `update effect_saga_approvals set status = 'pending', decision = '{"_tag":"Pending"}', decided_at = null where saga_id = 'h-4'`
          )
          const listed = yield* cli("approvals", "--db", db)
          expect(listed.code).toBe(1)
          expect(listed.stdout).toContain("next: effect-saga show h-4 says what to do")
          const shown = yield* cli("show", "h-4", "--db", db)
          expect(shown.code).toBe(1)
          expect(shown.stdout).toContain(
            `effect-saga does not act on this row: the saga does not wait for a decision on step ${waiting.request.stepId} (its journal answered the step, or never asked); the journal verifies, as below.`
          )
          const next = shown.stdout.split("\n").filter((line) => line.startsWith("next: "))
          expect(next).toEqual([
            `next: once you know who wrote the row, delete it (it stays listed, marked, until then): DELETE FROM effect_saga_approvals WHERE request_id = '${waiting.request.requestId}'; or restore the approvals table from a backup`
          ])
          // Followed as printed: the row is gone, and neither command marks anything.
          edit(db, next[0]!.slice(next[0]!.indexOf("DELETE"), next[0]!.indexOf("; or restore")))
          expect(yield* cli("approvals", "--db", db)).toMatchObject({ code: 0, stdout: "no approvals pending" })
          const clean = yield* cli("show", "h-4", "--db", db)
          expect(clean.code).toBe(0)
          expect(clean.stdout).toMatch(/^saga h-4: compensated\n/)
        })
    )

    it.scoped(
      "a decision forged for another input: approve is refused without saying that asking again finishes it",
      () =>
        Effect.gen(function* () {
          const db = freshFile()
          const waiting = yield* onFile(db, Saga.run("h-5", order))
          assert(waiting._tag === "AwaitingApproval")
          const forged = { _tag: "Approved", by: "alice", at: new Date().toISOString(), inputDigest: "b".repeat(64) }
          edit(
            db,
            "update effect_saga_approvals set status = 'approved', decision = ?, decided_at = ? where saga_id = 'h-5'",
            JSON.stringify(forged),
            forged.at
          )
          const refused = yield* cli("approve", "h-5", waiting.request.stepId, "--as", "alice", "--db", db)
          expect(refused.code).not.toBe(0)
          expect(refused.stderr).toContain(
            `was approved by alice, of another input than the one the journal asked about (its digest bbbbbbbbbbbb…, not ${waiting.request.inputDigest.slice(0, 12)}…), and no journal key signs it: no command made it, it was forged or made through the Approval service alone`
          )
          expect(refused.stderr).not.toContain("asked again, finishes it")
          expect(yield* nextLines(db, "h-5")).toEqual([
            "next: restore the approvals table from a backup, or end the saga: effect-saga compensate h-5 --register MODULE --as WHO"
          ])
        })
    )
  })
})
