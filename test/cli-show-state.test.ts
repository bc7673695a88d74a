/**
 * What `list` and `show` say about where a saga stands beyond its status: a lease that lapsed, a
 * saga no worker drives (and who could), why a step's outcome is unknown, and who resumes a saga
 * whose step was approved. The CLI runs in this process, on an SQLite file, at the test's clock.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, assert, describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Schema, TestClock } from "effect"
import { Compensable, Journal, Outcome, Recovery, Saga, SagaError } from "../src/index.js"
import { cliInProcess } from "./fixtures/cli-in-process.js"
import {
  Checkout,
  chargeCard,
  pingCarrier,
  reserveInventory,
  sendWireTransfer,
  ship,
  Tracking
} from "./fixtures/cli-tools.js"
import { gatedRelease } from "./fixtures/cli-undo-tools.js"
import { renamedPastUnknown } from "./fixtures/renamed-past-unknown.js"
import { siblingCut } from "./fixtures/sibling-cut.js"
import { onFile } from "./fixtures/worker-on-file.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-cli-state-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

let files = 0
const freshFile = () => path.join(dir, `${++files}.db`)

/** The CLI, run in this process. */
const cli = cliInProcess

const lineOf = (text: string, start: string) => text.split("\n").find((line) => line.startsWith(start))

/** What `show` says is next for a saga of `db`, and where the saga stands (`--revision N --digest HASH`). */
const readsOf = (db: string) => ({
  nextLines: (sagaId: string) =>
    Effect.map(cli("show", sagaId, "--db", db), (shown) =>
      shown.stdout.split("\n").filter((line) => line.startsWith("next: "))
    ),
  position: (sagaId: string) =>
    Effect.map(onFile(db, Saga.status(sagaId)), (status) => `--revision ${status.revision} --digest ${status.digest}`)
})

describe("effect-saga list and show, on where a saga stands", { timeout: 60_000 }, () => {
  it.scoped("a lease that lapsed says so, and a running saga no worker drives says who could take it", () =>
    Effect.gen(function* () {
      const db = freshFile()
      // A worker that died mid-step of a saga it started with Saga.run: its lease lapses in a second.
      yield* onFile(
        db,
        Effect.flatMap(Journal.Journal, (journal) =>
          journal.append(
            "u1",
            Journal.empty,
            [
              { stepId: null, toolName: null, phase: "SAGA_STARTED", input: null, payload: null },
              {
                stepId: "chargeCard:c0ffee#1",
                toolName: "chargeCard",
                phase: "INTENT",
                input: '{"amount":1}',
                payload: null
              }
            ],
            { owner: "w-dead", ttlMillis: 1000 }
          )
        )
      )
      const live = yield* cli("show", "u1", "--db", db)
      expect(live.code).toBe(0)
      expect(lineOf(live.stdout, "lease ")).toBe("lease w-dead until 1970-01-01T00:00:01.000Z")
      expect(live.stdout).not.toContain("no worker is driving it")
      expect((yield* cli("list", "--db", db)).stdout).toMatch(
        /^u1\s+running\s.*\sw-dead until 1970-01-01T00:00:01\.000Z$/m
      )

      yield* TestClock.adjust("2 seconds")
      // Its worker died and no Recovery can take it (started with Saga.run): stuck, exit 1.
      const lapsed = yield* cli("show", "u1", "--db", db)
      expect(lapsed.code).toBe(1)
      expect(lineOf(lapsed.stdout, "lease ")).toBe(
        "lease w-dead lapsed at 1970-01-01T00:00:01.000Z: no worker is driving it (last written 1970-01-01T00:00:00.000Z)"
      )
      expect(lineOf(lapsed.stdout, "next: no worker")).toMatch(
        /^next: no worker is driving it, and no Recovery can \(it was started with Saga\.run, not from a definition\): .*Saga\.resume\("u1", program\).*; or once chargeCard:c0ffee#1 is resolved \(above: a compensation before then cannot undo it and ends the saga compensation_failed\), effect-saga compensate u1 --register MODULE --as WHO \(at the position the saga moved to: effect-saga show u1 prints it\)$/
      )
      const listed = yield* cli("list", "--db", db)
      expect(listed.code).toBe(1)
      expect(listed.stdout).toMatch(
        /^u1\s+running\s.*\sw-dead lapsed at 1970-01-01T00:00:01\.000Z: no worker is driving it$/m
      )
      expect(listed.stdout.split("\n").at(-1)).toBe(
        "saga u1: stuck: no worker is driving it, and no Recovery can (it was started with Saga.run): run its program again, or compensate it once any step whose outcome is unknown is resolved (effect-saga show u1 says which, and how)"
      )
      const json = yield* cli("list", "--db", db, "--json")
      expect(json.code).toBe(1)
      expect(JSON.parse(json.stdout)).toMatchObject([{ sagaId: "u1", tampered: null, stuck: true }])
      // The diagram says so too, as its last note.
      const diagram = yield* cli("show", "u1", "--format", "mermaid", "--db", db)
      expect(diagram.stdout.split("\n").at(-1)).toBe(
        "  Note over S: lease w-dead lapsed at 1970-01-01T00:00:01.000Z: no worker is driving it"
      )

      yield* onFile(
        db,
        Effect.flatMap(Journal.Journal, (journal) => journal.release("w-dead", "u1"))
      )
      const released = yield* cli("show", "u1", "--db", db)
      expect(lineOf(released.stdout, "lease ")).toBe(
        "lease none: no worker is driving it (last written 1970-01-01T00:00:00.000Z)"
      )
      const none = yield* cli("list", "--db", db)
      expect(none.stdout).toMatch(/^u1\s+running\s.*\snone: no worker is driving it$/m)
      expect(none.code).toBe(1)
      expect((yield* cli("show", "u1", "--db", db)).code).toBe(1)
    })
  )

  it.scoped("a step a live worker runs is in flight, not unknown: show says who runs it and to wait, not resolve", () =>
    Effect.gen(function* () {
      const db = freshFile()
      // Another worker mid-step: INTENT journaled, its call not answered yet, its lease live for a second.
      yield* onFile(
        db,
        Effect.flatMap(Journal.Journal, (journal) =>
          journal.append(
            "f1",
            Journal.empty,
            [
              { stepId: null, toolName: null, phase: "SAGA_STARTED", input: null, payload: null },
              {
                stepId: "chargeCard:c0ffee#1",
                toolName: "chargeCard",
                phase: "INTENT",
                input: '{"amount":1}',
                payload: null
              }
            ],
            { owner: "worker-b", ttlMillis: 1000 }
          )
        )
      )
      const live = yield* cli("show", "f1", "--db", db)
      expect(live.code).toBe(0)
      expect(live.stdout).toMatch(/^chargeCard:c0ffee#1\s+chargeCard\s+in flight\s*$/m)
      expect(live.stdout).toMatch(
        /chargeCard\s+INTENT\s+no outcome journaled yet: in flight \(running now, by worker-b, lease until 1970-01-01T00:00:01\.000Z\)$/m
      )
      expect(live.stdout).not.toContain("no outcome journaled: unknown")
      expect(live.stdout).not.toContain("effect-saga resolve")
      expect(lineOf(live.stdout, "next: ")).toBe(
        "next: wait: chargeCard:c0ffee#1 is running now, by worker-b, lease until 1970-01-01T00:00:01.000Z; its worker journals the outcome when the call answers. Only if that lease lapses with no outcome journaled is it unknown, to resolve (effect-saga show f1 then says how)"
      )
      const drawn = yield* cli("show", "f1", "--format", "mermaid", "--db", db)
      expect(drawn.stdout).toContain(
        "\n  Note over T1: in flight (no outcome journaled yet): running now, by worker-b, lease until 1970-01-01T00:00:01.000Z"
      )
      expect(drawn.stdout).not.toContain("unknown")
      // --json and Saga.status say so too: a dashboard looking for unknown steps finds none.
      const liveJson = JSON.parse((yield* cli("show", "f1", "--json", "--db", db)).stdout)
      expect(liveJson.saga.steps[0]).toMatchObject({ state: "in_flight" })
      expect(liveJson.saga.steps[0]).not.toHaveProperty("unknownReason")
      const status = yield* onFile(db, Saga.status("f1"))
      expect(status.steps.map((step) => step.state)).toEqual(["in_flight"])
      // What the line said holds: resolving it now is refused, nothing written.
      const refused = yield* cli("resolve", "f1", "chargeCard:c0ffee#1", "--not-applied", "--as", "op", "--db", db)
      expect(refused.code).toBe(2)
      expect(refused.stderr).toContain("is being driven by worker-b")

      // Once the lease lapsed with no outcome journaled, the outcome is unknown: resolve it.
      yield* TestClock.adjust("2 seconds")
      const lapsed = yield* cli("show", "f1", "--db", db)
      expect(lapsed.stdout).toMatch(/^chargeCard:c0ffee#1\s+chargeCard\s+unknown\s*$/m)
      expect(lapsed.stdout).toMatch(/chargeCard\s+INTENT\s+no outcome journaled: unknown$/m)
      expect(lapsed.stdout).toContain("next: effect-saga resolve f1 chargeCard:c0ffee#1 --applied")
      const unknown = yield* cli("show", "f1", "--format", "mermaid", "--db", db)
      expect(unknown.stdout).toContain("\n  Note over T1: outcome unknown (no outcome journaled)\n")
      const lapsedJson = JSON.parse((yield* cli("show", "f1", "--json", "--db", db)).stdout)
      expect(lapsedJson.saga.steps[0].state).toBe("unknown")
    })
  )

  it.scoped("while a worker compensates the saga, a step with no outcome is not to be resolved yet: wait", () =>
    Effect.gen(function* () {
      const db = freshFile()
      yield* onFile(
        db,
        Effect.flatMap(Journal.Journal, (journal) =>
          journal.append(
            "c1",
            Journal.empty,
            [
              { stepId: null, toolName: null, phase: "SAGA_STARTED", input: null, payload: null },
              { stepId: "chargeCard:c0ffee#1", toolName: "chargeCard", phase: "INTENT", input: "1", payload: null },
              {
                stepId: null,
                toolName: null,
                phase: "SAGA_COMPENSATING",
                input: null,
                payload: JSON.stringify({ cause: "the operator asked" })
              }
            ],
            { owner: "worker-b", ttlMillis: 1000 }
          )
        )
      )
      const shown = yield* cli("show", "c1", "--db", db)
      expect(shown.stdout.split("\n")[0]).toBe("saga c1: compensating")
      expect(shown.stdout).not.toContain("effect-saga resolve")
      expect(lineOf(shown.stdout, "next: ")).toBe(
        "next: wait: worker-b holds the saga's lease until 1970-01-01T00:00:01.000Z (resolving chargeCard:c0ffee#1 is refused while it does); once it is dropped or lapsed, effect-saga show c1 says how to resolve it"
      )
    })
  )

  it.scoped("a saga compensating under a live lease: wait for it, or for the lease to lapse if its worker died", () =>
    Effect.gen(function* () {
      const db = freshFile()
      yield* onFile(
        db,
        Effect.flatMap(Journal.Journal, (journal) =>
          journal.append(
            "c2",
            Journal.empty,
            [
              { stepId: null, toolName: null, phase: "SAGA_STARTED", input: null, payload: null },
              { stepId: "chargeCard:c0ffee#1", toolName: "chargeCard", phase: "INTENT", input: "1", payload: null },
              {
                stepId: "chargeCard:c0ffee#1",
                toolName: "chargeCard",
                phase: "EXECUTED",
                input: null,
                payload: JSON.stringify({ result: "ch-1" })
              },
              {
                stepId: null,
                toolName: null,
                phase: "SAGA_COMPENSATING",
                input: null,
                payload: JSON.stringify({ cause: "the operator asked" })
              }
            ],
            { owner: "cli-oncall", ttlMillis: 1000 }
          )
        )
      )
      const shown = yield* cli("show", "c2", "--db", db)
      expect(shown.stdout.split("\n")[0]).toBe("saga c2: compensating")
      expect(shown.stdout.split("\n").filter((line) => line.startsWith("next: "))).toEqual([
        "next: wait: cli-oncall holds the saga's lease until 1970-01-01T00:00:01.000Z while it compensates (compensate and resolve are refused while it does); if that worker died, the lease lapses then, and effect-saga show c2 says how to go on"
      ])
    })
  )

  it.scoped("an explicit undo running under a live lease: its run and its saga say to wait, until when", () =>
    Effect.gen(function* () {
      const db = freshFile()
      const lease = { owner: "cli-oncall", ttlMillis: 1000 }
      const step = { stepId: "s:1#1", toolName: "s" }
      const saga = { stepId: null, toolName: null, input: null }
      yield* onFile(
        db,
        Effect.flatMap(Journal.Journal, (journal) =>
          Effect.zipRight(
            journal
              .append(
                "x1",
                Journal.empty,
                [
                  { ...saga, phase: "SAGA_STARTED", payload: null },
                  { ...step, phase: "INTENT", input: "1", payload: null },
                  { ...step, phase: "EXECUTED", input: null, payload: JSON.stringify({ result: "r" }) },
                  { ...saga, phase: "SAGA_COMPLETED", payload: null }
                ],
                lease
              )
              .pipe(Effect.zipRight(journal.claim("x1", lease))),
            journal.append(
              "x1/s:1#1/compensate-effect",
              Journal.empty,
              [
                { ...saga, phase: "SAGA_STARTED", payload: JSON.stringify({ effectId: "x1/s:1#1" }) },
                {
                  ...step,
                  phase: "COMPENSATING",
                  input: null,
                  payload: JSON.stringify({ idempotencyKey: "x1/s:1#1/compensate-effect" })
                }
              ],
              lease
            )
          )
        )
      )
      const nextOf = (text: string) => text.split("\n").filter((line) => line.startsWith("next: "))
      expect(nextOf((yield* cli("show", "x1/s:1#1/compensate-effect", "--db", db)).stdout)).toEqual([
        "next: wait: cli-oncall holds the run's lease until 1970-01-01T00:00:01.000Z while its undo runs (asking for it again, and the saga's own compensation, wait or are refused while it does); if that worker died, the lease lapses then, and effect-saga show x1/s:1#1/compensate-effect says how to go on"
      ])
      expect(nextOf((yield* cli("show", "x1", "--db", db)).stdout)).toEqual([
        "next: wait: cli-oncall holds the saga's lease until 1970-01-01T00:00:01.000Z (a command, or an explicit undo of one of its steps, runs on it: compensate and resolve are refused while it does); if that worker died, the lease lapses then, and effect-saga show x1 says how to go on"
      ])
      // Its worker died: the run is left behind, and a Recovery pass asks again, which runs no started undo twice.
      yield* TestClock.adjust("2 seconds")
      const [leftBehind] = nextOf((yield* cli("show", "x1/s:1#1/compensate-effect", "--db", db)).stdout)
      expect(leftBehind).toMatch(
        /^next: no worker is driving it: any worker's Recovery asks for the effect again at its next pass \(an undo that started and has no outcome is answered unknown, never run again\), or /
      )
    })
  )

  it.scoped("a run that answered with the saga's own unknown undo: resolve it in the saga first, then the run", () =>
    Effect.gen(function* () {
      const db = freshFile()
      const unheard = Compensable.make({
        name: "unheard",
        input: Schema.String,
        success: Schema.String,
        execute: (to) => Effect.succeed(`sent-${to}`),
        compensate: () => Effect.fail(Outcome.unknown("the carrier did not answer"))
      })
      const step = yield* onFile(
        db,
        Effect.gen(function* () {
          yield* Saga.run("u9", unheard("acme"))
          yield* Saga.compensate("u9")
          const only = (yield* Saga.status("u9")).steps[0]!
          expect(yield* Saga.compensateEffect(only.effectId)).toMatchObject({ outcome: "unknown" })
          return only
        })
      )
      const runId = `${step.effectId}/compensate-effect`
      const run = yield* onFile(db, Saga.status(runId))
      const shown = yield* cli("show", runId, "--db", db)
      const nextOf = (text: string) => text.split("\n").filter((line) => line.startsWith("next: "))
      expect(nextOf(shown.stdout)).toEqual([
        `next: this run answers with the saga's own undo of ${step.stepId} (key u9/${step.stepId}/undo), unknown: resolve it in the saga first (effect-saga show u9 says how); then effect-saga show ${runId} says how to close this run`
      ])
      // Once the saga's step is resolved, the run's line offers the same resolution, which closes it as printed.
      yield* onFile(db, Saga.resolve("u9", step.stepId, { outcome: "applied", by: "oncall" }))
      const line = nextOf((yield* cli("show", runId, "--db", db)).stdout)
      expect(line).toEqual([
        `next: this run answers with the saga's own undo of ${step.stepId} (key u9/${step.stepId}/undo), which the saga says is undone now: effect-saga resolve ${runId} ${step.stepId} --applied --as WHO --revision ${run.revision} --digest ${run.digest}`
      ])
      const printed = line[0]!.slice(line[0]!.indexOf("effect-saga resolve ") + "effect-saga ".length)
      const closed = yield* cli(...printed.split(" ").map((word) => (word === "WHO" ? "oncall" : word)), "--db", db)
      expect(closed.code, closed.stderr).toBe(0)
      expect((yield* onFile(db, Saga.status(runId))).status).toBe("completed")
    })
  )

  it.scoped("a saga started from a definition whose worker died is between workers, not stuck: exit 0", () =>
    Effect.gen(function* () {
      const db = freshFile()
      yield* onFile(
        db,
        Effect.flatMap(Journal.Journal, (journal) =>
          journal.append(
            "d1",
            Journal.empty,
            [
              {
                stepId: null,
                toolName: null,
                phase: "SAGA_STARTED",
                input: null,
                payload: JSON.stringify({ definition: "checkout", input: { orderId: "d1", amount: 1 } })
              },
              {
                stepId: "chargeCard:c0ffee#1",
                toolName: "chargeCard",
                phase: "INTENT",
                input: '{"amount":1}',
                payload: null
              }
            ],
            { owner: "w-dead", ttlMillis: 1000 }
          )
        )
      )
      yield* TestClock.adjust("2 seconds")
      const shown = yield* cli("show", "d1", "--db", db)
      expect(shown.code).toBe(0)
      expect(lineOf(shown.stdout, "next: no worker")).toMatch(
        /^next: no worker is driving it: a worker whose Recovery was given definition checkout takes it at its next pass/
      )
      const listed = yield* cli("list", "--db", db)
      expect(listed.code).toBe(0)
      expect(listed.stdout).not.toContain("stuck")
    })
  )

  it.scoped("show prints why a step's outcome is unknown, as the saga journaled it", () =>
    Effect.gen(function* () {
      const db = freshFile()
      const result = yield* onFile(db, Saga.start(Tracking, "t-1", { orderId: "t-1" }))
      expect(result._tag).toBe("NeedsAttention")
      const shown = yield* cli("show", "t-1", "--db", db)
      expect(shown.code).toBe(1)
      expect(shown.stdout).toMatch(
        /pingCarrier\s+INTENT\s+no outcome journaled: unknown \(outcome unknown: the carrier did not answer\)$/m
      )
      // A saga that halted holds no lease and needs none: nothing more is said of it.
      expect(lineOf(shown.stdout, "lease ")).toBe("lease none")
      const diagram = yield* cli("show", "t-1", "--format", "mermaid", "--db", db)
      expect(diagram.stdout).toContain(
        "\n  Note over T2: outcome unknown (no outcome journaled): outcome unknown: the carrier did not answer\n"
      )
      expect(diagram.stdout).not.toContain("lease")
    })
  )

  it.scoped(
    "a call a shutdown cut under onInterrupt compensate: show says the interruption cut it, not that a worker may be paused",
    () =>
      Effect.gen(function* () {
        const db = freshFile()
        const { nextLines } = readsOf(db)
        const started = yield* Deferred.make<void>()
        const hangs = Compensable.make({
          name: "hangs",
          input: Schema.String,
          success: Schema.String,
          execute: () => Effect.zipRight(Deferred.succeed(started, undefined), Effect.never),
          compensate: () => Effect.void
        })
        const fiber = yield* Effect.fork(onFile(db, Saga.run("shut-1", hangs("a"), { onInterrupt: "compensate" })))
        yield* Deferred.await(started)
        yield* Fiber.interrupt(fiber)
        const status = yield* onFile(db, Saga.status("shut-1"))
        expect(status.status).toBe("needs_attention")
        const stepId = status.steps[0]!.stepId
        const [resolveLine] = yield* nextLines("shut-1")
        expect(resolveLine).toContain(
          `; before --not-applied, make sure the call cannot still happen: the run's interruption cut the call while it ran, and the provider may still act on what it received (ask it about the key shut-1/${stepId})`
        )
        expect(resolveLine).not.toContain("may only be paused")
      })
  )

  it.scoped(
    "a call a failing sibling cut: show says the provider may still act and a resume may not settle it; resolved, that a resume compensates",
    () =>
      Effect.gen(function* () {
        const db = freshFile()
        const { nextLines, position } = readsOf(db)
        const { world, program } = siblingCut()
        const first = yield* onFile(db, Saga.run("cut-1", program))
        assert(first._tag === "NeedsAttention")
        const held = first.unknown[0]!.stepId
        // Resumed, the call is asked again by its key and cut again: the first attempt says so.
        expect((yield* onFile(db, Saga.run("cut-1", program)))._tag).toBe("NeedsAttention")
        const intents = (yield* onFile(db, Journal.Journal.pipe(Effect.flatMap((journal) => journal.read("cut-1")))))
          .filter((entry) => entry.stepId === held && entry.phase === "INTENT")
          .map((entry) => entry.seq)
        expect(intents).toHaveLength(2)
        const timeline = (yield* cli("show", "cut-1", "--db", db)).stdout.split("\n")
        expect(timeline.find((line) => line.startsWith(`${intents[0]} `))).toMatch(
          new RegExp(`INTENT\\s+no outcome journaled: run again at seq ${intents[1]}$`)
        )
        expect(timeline.find((line) => line.startsWith(`${intents[1]} `))).toMatch(
          /INTENT\s+no outcome journaled: unknown \(the program interrupted the call /
        )
        const [resolveLine] = yield* nextLines("cut-1")
        expect(resolveLine).toContain(
          `; before --not-applied, make sure the call cannot still happen: the program cut the call while it ran, and the provider may still act on what it received (ask it about the key cut-1/${held}); a resume may not settle it: it stops at the step again or, for a tool that retries by key, may cut the call again`
        )
        expect(resolveLine).not.toContain("may only be paused")
        // Its tool retries by key, but the program cut it and a resume cuts it again: resolve, not resume.
        expect(resolveLine).toMatch(/^next: effect-saga resolve cut-1 /)
        // Resolved from the provider's record of that key: the sibling's failure binds the saga to compensate.
        const at = yield* position("cut-1")
        const resolved = yield* cli(
          ...["resolve", "cut-1", held, "--applied", "--result", '"h-A"', "--as", "oncall", ...at.split(" ")],
          "--db",
          db
        )
        expect(resolved.code).toBe(0)
        const failed = (yield* onFile(db, Saga.status("cut-1"))).steps.find((step) => step.toolName === "check")!
        expect(resolved.stdout).toContain(
          `; resume the saga: it compensates (step ${failed.stepId} failed, which binds it to compensate)`
        )
        expect(yield* nextLines("cut-1")).toEqual([
          expect.stringMatching(
            new RegExp(
              `^next: nothing is left to resolve: the saga compensates \\(step ${failed.stepId.replace(/[#:]/g, ".")} failed, which binds it to compensate\\) when it is resumed, by `
            )
          )
        ])
        expect(yield* onFile(db, Saga.run("cut-1", program))).toMatchObject({ _tag: "Compensated" })
        expect(world).toEqual(["release h-A"])
      })
  )

  it.scoped(
    "the diagram escapes a reason as the rest of it: no line break, no control character, # ; < > as codes",
    () =>
      Effect.gen(function* () {
        const db = freshFile()
        const carrier = Compensable.make({
          name: "pingCarrier",
          input: Schema.String,
          success: Schema.String,
          execute: () => Effect.fail(Outcome.unknown("no answer;\nNote over S: forged <b>#1</b>\u001b]0;x\u0007"))
        })
        expect((yield* onFile(db, Saga.run("e-1", carrier("o-1"))))._tag).toBe("NeedsAttention")
        const diagram = yield* cli("show", "e-1", "--format", "mermaid", "--db", db)
        expect(diagram.code).toBe(1)
        expect(diagram.stdout.split("\n")).toContain(
          "  Note over T1: outcome unknown (no outcome journaled): outcome unknown: no answer#59;\\nNote over S: forged #lt;b#gt;#35;1#lt;/b#gt;\\u001b]0#59;x\\u0007"
        )
        expect(diagram.stdout.split("\n").filter((line) => line.includes("forged"))).toHaveLength(1)
      })
  )

  it.scoped("an approved step's saga still awaits approval: show says who resumes it; a Recovery pass does not", () =>
    Effect.gen(function* () {
      const db = freshFile()
      expect((yield* onFile(db, Saga.start(Checkout, "o-1", { orderId: "o-1", amount: 4200 })))._tag).toBe(
        "AwaitingApproval"
      )
      const waiting = yield* onFile(db, Saga.status("o-1"))
      const wire = waiting.steps.find((step) => step.state === "awaiting_approval")!.stepId
      yield* onFile(db, Saga.approve("o-1", wire, { by: "bob" }))

      const shown = yield* cli("show", "o-1", "--db", db)
      expect(shown.code).toBe(0)
      expect(shown.stdout.split("\n")[0]).toBe("saga o-1: awaiting_approval")
      expect(shown.stdout).not.toContain("effect-saga approve")
      expect(lineOf(shown.stdout, "next: ")).toBe(
        `next: ${wire} is approved and runs when the saga is resumed, by a worker given definition checkout: Recovery.resume("o-1"), or Saga.start with checkout (a Recovery pass does not take a saga awaiting approval)`
      )

      // As the line says: a pass leaves it; Recovery.resume runs the approved step.
      const [passed, resumed] = yield* onFile(
        db,
        Effect.flatMap(Recovery.make({ definitions: [Checkout] }), (recovery) =>
          Effect.zip(recovery.recoverAll, recovery.resume("o-1"))
        )
      )
      expect(passed.sagas).toEqual([])
      expect(resumed._tag).toBe("Completed")
    })
  )

  it.scoped("the Recovery.resume call a next line prints names the very saga when pasted into a program", () =>
    Effect.gen(function* () {
      const db = freshFile()
      const sagaId = 'o"q\\x'
      yield* onFile(db, Saga.start(Checkout, sagaId, { orderId: "o-q", amount: 4200 }))
      const waiting = yield* onFile(db, Saga.status(sagaId))
      const wire = waiting.steps.find((step) => step.state === "awaiting_approval")!.stepId
      yield* onFile(db, Saga.approve(sagaId, wire, { by: "bob" }))
      const next = lineOf((yield* cli("show", "--db", db, "--", sagaId)).stdout, "next: ")!
      const literal = /Recovery\.resume\(("(?:[^"\\]|\\.)*")\)/.exec(next)![1]!
      expect(JSON.parse(literal)).toBe(sagaId)

      // Started with Saga.run: the Saga.resume call, likewise.
      const byRun = 'r"q\\x'
      yield* onFile(db, Saga.run(byRun, sendWireTransfer({ amount: 5, to: "acme" })))
      const wireOfRun = (yield* onFile(db, Saga.status(byRun))).steps[0]!.stepId
      yield* onFile(db, Saga.approve(byRun, wireOfRun, { by: "bob" }))
      const nextOfRun = lineOf((yield* cli("show", "--db", db, "--", byRun)).stdout, "next: ")!
      const resumed = /Saga\.resume\(("(?:[^"\\]|\\.)*"), program\)/.exec(nextOfRun)![1]!
      expect(JSON.parse(resumed)).toBe(byRun)
    })
  )

  it.scoped("an explicit undo approved, then its approval lapsed: the saga's show says it lapsed, not approved", () =>
    Effect.gen(function* () {
      const db = freshFile()
      const step = yield* onFile(
        db,
        Effect.gen(function* () {
          yield* Saga.run("g-1", gatedRelease("A"))
          const [step] = (yield* Saga.status("g-1")).steps
          expect((yield* Saga.compensateEffect(step!.effectId))._tag).toBe("AwaitingApproval")
          return step!
        })
      )
      const until = "1970-01-01T00:01:00.000Z"
      yield* onFile(
        db,
        Saga.approve(`${step.effectId}/compensate-effect`, step.stepId, { by: "alice", expiresAt: until })
      )
      expect((yield* cli("show", "g-1", "--db", db)).stdout).toContain(
        `${step.stepId}: explicit undo approved: it runs when it is asked for again (compensateEffect)`
      )
      yield* TestClock.adjust("2 minutes")
      expect((yield* cli("show", "g-1", "--db", db)).stdout).toContain(
        `${step.stepId}: explicit undo approved, and the approval lapsed at ${until}: asked for again, its run journals EXPIRED and answers failed`
      )
      const shown = JSON.parse((yield* cli("show", "g-1", "--db", db, "--json")).stdout)
      expect(shown.saga.steps[0].explicitUndo).toMatchObject({ status: "awaiting_approval", approvalLapsedAt: until })
      expect(shown.saga.steps[0].explicitUndo.approved).toBeUndefined()
    })
  )

  it.scoped("an approved step of a saga compensated before it ran: show says it never runs", () =>
    Effect.gen(function* () {
      const db = freshFile()
      yield* onFile(db, Saga.start(Checkout, "o-c", { orderId: "o-c", amount: 4200 }))
      const waiting = yield* onFile(db, Saga.status("o-c"))
      const wire = waiting.steps.find((step) => step.state === "awaiting_approval")!
      yield* onFile(db, Saga.approve("o-c", wire.stepId, { by: "bob" }))
      yield* onFile(db, Saga.compensate("o-c"))

      const shown = yield* cli("show", "o-c", "--db", db)
      // (compensation_failed: this process registers none of the saga's tools, so no undo runs)
      expect(shown.stdout.split("\n")[0]).toMatch(/^saga o-c: compensat/)
      const row = lineOf(shown.stdout, wire.stepId)!
      expect(row).toContain("approved, never run (the saga began to compensate)")
    })
  )

  it.scoped("an approval's expiry is shown; once it passed, show says a resume compensates unless it is renewed", () =>
    Effect.gen(function* () {
      const db = freshFile()
      expect((yield* onFile(db, Saga.start(Checkout, "x-1", { orderId: "x-1", amount: 4200 })))._tag).toBe(
        "AwaitingApproval"
      )
      const waiting = yield* onFile(db, Saga.status("x-1"))
      const wire = waiting.steps.find((step) => step.state === "awaiting_approval")!.stepId
      yield* onFile(db, Saga.approve("x-1", wire, { by: "bob", expiresAt: "1970-01-01T00:01:00.000Z" }))

      const holds = yield* cli("show", "x-1", "--db", db)
      expect(holds.code).toBe(0)
      expect(holds.stdout).toMatch(/\sAPPROVED\s+by bob \(valid until 1970-01-01T00:01:00\.000Z\)$/m)
      expect(lineOf(holds.stdout, "next: ")).toBe(
        `next: ${wire} is approved until 1970-01-01T00:01:00.000Z and runs when the saga is resumed before then, by a worker given definition checkout: Recovery.resume("x-1"), or Saga.start with checkout (a Recovery pass does not take a saga awaiting approval)`
      )

      yield* TestClock.adjust("2 minutes")
      const lapsed = yield* cli("show", "x-1", "--db", db)
      expect(lapsed.code).toBe(0)
      const at = lapsed.stdout.match(/^revision (\d+) {2}digest (\w+)$/m)!
      expect(lineOf(lapsed.stdout, "next: ")).toBe(
        `next: the approval of ${wire} lapsed at 1970-01-01T00:01:00.000Z: resumed as it is, the saga journals EXPIRED and compensates; to run the step still, renew it first: effect-saga renew-approval x-1 ${wire} --as WHO --expires-at TIME --revision ${at[1]} --digest ${at[2]}, then resume the saga, by a worker given definition checkout: Recovery.resume("x-1"), or Saga.start with checkout`
      )
      expect(lapsed.stdout).not.toContain("runs when the saga is resumed")

      // As the line says: renewed, it holds again until the new expiry.
      const renewed = yield* cli(
        "renew-approval",
        "x-1",
        wire,
        "--as",
        "alice",
        "--expires-at",
        "1970-01-01T01:00:00Z",
        "--revision",
        at[1]!,
        "--digest",
        at[2]!,
        "--db",
        db
      )
      expect(renewed.code).toBe(0)
      const again = yield* cli("show", "x-1", "--db", db)
      expect(again.stdout).toMatch(/\sAPPROVED\s+renewed by alice \(valid until 1970-01-01T01:00:00\.000Z\)$/m)
      expect(lineOf(again.stdout, "next: ")).toMatch(
        new RegExp(`^next: ${wire.replace(/[#:]/g, ".")} is approved until 1970-01-01T01:00:00\\.000Z and runs`)
      )
    })
  )

  it.scoped("a resume after the approval lapsed journals EXPIRED and compensates, as show said it would", () =>
    Effect.gen(function* () {
      const db = freshFile()
      yield* onFile(db, Saga.start(Checkout, "x-2", { orderId: "x-2", amount: 4200 }))
      const wire = (yield* onFile(db, Saga.status("x-2"))).steps.find(
        (step) => step.state === "awaiting_approval"
      )!.stepId
      yield* onFile(db, Saga.approve("x-2", wire, { by: "bob", expiresAt: "1970-01-01T00:01:00.000Z" }))
      yield* TestClock.adjust("2 minutes")
      expect(lineOf((yield* cli("show", "x-2", "--db", db)).stdout, "next: ")).toContain("lapsed at")
      const resumed = yield* onFile(
        db,
        Effect.flatMap(Recovery.make({ definitions: [Checkout] }), (recovery) => recovery.resume("x-2"))
      )
      expect(resumed._tag).toBe("Compensated")
      const shown = yield* cli("show", "x-2", "--db", db)
      expect(shown.stdout).toMatch(
        /\sEXPIRED\s+the approval by bob at 1970-01-01T00:00:00\.000Z expired at 1970-01-01T00:01:00\.000Z \(its expiresAt\)/m
      )
    })
  )

  it.scoped("a saga started with Saga.run and suspended by a shutdown is stuck: no Recovery takes it", () =>
    Effect.gen(function* () {
      const db = freshFile()
      const saga = (phase: Journal.Phase) => ({ stepId: null, toolName: null, phase, input: null, payload: null })
      yield* onFile(
        db,
        Effect.flatMap(Journal.Journal, (journal) =>
          journal.append("s1", Journal.empty, [saga("SAGA_STARTED"), saga("SAGA_SUSPENDED")])
        )
      )
      const shown = yield* cli("show", "s1", "--db", db)
      expect(shown.code).toBe(1)
      expect(lineOf(shown.stdout, "next: ")).toMatch(/^next: no worker is driving it, and no Recovery can/)
      const json = yield* cli("list", "--db", db, "--json")
      expect(json.code).toBe(1)
      expect(JSON.parse(json.stdout)).toMatchObject([{ sagaId: "s1", status: "suspended", stuck: true }])
    })
  )

  it.scoped(
    "a compensation that failed says what is next: compensate again for undos unavailable, by hand for undos that left something live, compensate again once nothing is dirty",
    () =>
      Effect.gen(function* () {
        const db = freshFile()
        const { nextLines, position } = readsOf(db)

        // Rejected in a process where its tools are not registered: the undos are unavailable.
        const order = Effect.zipRight(
          reserveInventory({ sku: "A-1", quantity: 1 }),
          sendWireTransfer({ amount: 5, to: "acme" })
        )
        const waiting = yield* onFile(db, Saga.run("c-1", order))
        assert(waiting._tag === "AwaitingApproval")
        const rejected = yield* onFile(db, Saga.reject("c-1", waiting.request.stepId, { by: "bob", reason: "no" }))
        expect(rejected.status).toBe("compensation_failed")
        const reserve = (yield* onFile(db, Saga.status("c-1"))).steps.find(
          (step) => step.toolName === "reserveInventory"
        )!
        expect(yield* nextLines("c-1")).toEqual([
          `next: effect-saga compensate c-1 --register MODULE --as WHO ${yield* position("c-1")}, from a process that has their tools registered (and the receipt keys, if their receipts are sealed): it runs the undo of ${reserve.stepId} and journals a new report`
        ])

        // An undo that failed: undone by hand, never run again.
        const stuck = Compensable.make({
          name: "stuck",
          input: Schema.String,
          success: Schema.String,
          execute: (id) => Effect.succeed(id),
          compensate: () => Effect.fail(Outcome.failed("the provider refused the refund"))
        })
        const failing = Effect.zipRight(stuck("s-1"), ship({ orderId: "c-2-down" }))
        expect((yield* onFile(db, Saga.run("c-2", failing)))._tag).toBe("CompensationFailed")
        const stuckStep = (yield* onFile(db, Saga.status("c-2"))).steps.find((step) => step.toolName === "stuck")!
        const resolveC2 = `effect-saga resolve c-2 ${stuckStep.stepId} --applied --as WHO ${yield* position("c-2")}`
        expect(yield* nextLines("c-2")).toEqual([
          `next: undo by hand, at the provider, what this undo left live: ${stuckStep.stepId} (undo failed, key c-2/${stuckStep.stepId}/undo); effect-saga does not run a settled undo again: once the effect is undone, say so (${resolveC2}), then compensate the saga again, which ends it compensated once nothing else is dirty`
        ])
        // Followed as written, once the refund was made by hand: the saga ends compensated.
        const said = resolveC2.replace("effect-saga ", "").replace("WHO", "carol").split(" ")
        expect((yield* cli(...said, "--db", db)).code).toBe(0)
        const [clean] = yield* nextLines("c-2")
        expect(clean).toMatch(
          /^next: nothing is left dirty since the last report: effect-saga compensate c-2 --as WHO /
        )
        const compensateC2 = clean!
          .replace(/^next: nothing is left dirty since the last report: effect-saga /, "")
          .replace(/ \(no undo.*$/, "")
        const compensatedC2 = yield* cli(...compensateC2.replace("WHO", "carol").split(" "), "--db", db)
        expect(compensatedC2.code).toBe(0)
        expect((yield* onFile(db, Saga.status("c-2"))).status).toBe("compensated")

        // A step left unknown, resolved not applied after the report: nothing is dirty any more.
        const unknown = Effect.zipRight(chargeCard({ amount: 7 }), pingCarrier({ orderId: "c-3" }))
        // Compensated where the charge was made, so its tool is registered: its undo completes.
        const compensated = yield* onFile(
          db,
          Effect.flatMap(Saga.run("c-3", unknown), (first) =>
            Effect.map(Saga.compensate("c-3"), (report) => [first._tag, report.status])
          )
        )
        expect(compensated).toEqual(["NeedsAttention", "compensation_failed"])
        const ping = (yield* onFile(db, Saga.status("c-3"))).steps.find((step) => step.toolName === "pingCarrier")!
        expect(yield* nextLines("c-3")).toEqual([
          expect.stringMatching(
            new RegExp(
              `^next: effect-saga resolve c-3 .*; before --not-applied, make sure the call cannot still happen: a worker whose lease lapsed may only be paused \\(its process dead or restarted, or the provider refusing the key c-3/${ping.stepId.replace(/[#:]/g, ".")} from now on\\)$`
            )
          )
        ])
        yield* onFile(db, Saga.resolve("c-3", ping.stepId, { outcome: "not-applied", by: "carol" }))
        expect(yield* nextLines("c-3")).toEqual([
          `next: nothing is left dirty since the last report: effect-saga compensate c-3 --as WHO ${yield* position("c-3")} (no undo is left to run: no module to register) journals a new one, and the saga ends compensated`
        ])
        expect((yield* onFile(db, Saga.compensate("c-3"))).status).toBe("compensated")
        expect(yield* nextLines("c-3")).toEqual([])
      })
  )

  it.scoped(
    "a compensation that failed never names a read as an undo to run, and asks the provider about an undo that answered unknown before anything is undone by hand",
    () =>
      Effect.gen(function* () {
        const db = freshFile()
        const { nextLines, position } = readsOf(db)
        const checkStock = Compensable.make({
          name: "checkStock",
          input: Schema.String,
          success: Schema.Number,
          changesNothing: true,
          execute: () => Effect.succeed(3)
        })
        const refund = (answer: Outcome.Failed | Outcome.Unknown) =>
          Compensable.make({
            name: `charge-${answer._tag}`,
            input: Schema.Number,
            success: Schema.String,
            execute: (amount) => Effect.succeed(`ch-${amount}`),
            compensate: () => Effect.fail(answer)
          })
        const checkout = (charge: ReturnType<typeof refund>) =>
          Effect.gen(function* () {
            yield* checkStock("A-1")
            yield* charge(7)
            return yield* Effect.fail(Outcome.failed("the carrier declined"))
          })

        // The refund failed: the charge is left live; the read has nothing to undo.
        const failing = refund(Outcome.failed("the bank refused the refund"))
        expect((yield* onFile(db, Saga.run("r-1", checkout(failing))))._tag).toBe("CompensationFailed")
        const charged = (yield* onFile(db, Saga.status("r-1"))).steps.find((step) => step.toolName === failing.name)!
        expect(yield* nextLines("r-1")).toEqual([
          `next: undo by hand, at the provider, what this undo left live: ${charged.stepId} (undo failed, key r-1/${charged.stepId}/undo); effect-saga does not run a settled undo again: once the effect is undone, say so (effect-saga resolve r-1 ${charged.stepId} --applied --as WHO ${yield* position("r-1")}), then compensate the saga again, which ends it compensated once nothing else is dirty`
        ])

        // The refund answered unknown: it may have happened, so the provider is asked first.
        const unsure = refund(Outcome.unknown("the bank timed out"))
        expect((yield* onFile(db, Saga.run("r-2", checkout(unsure))))._tag).toBe("CompensationFailed")
        const unsureStep = (yield* onFile(db, Saga.status("r-2"))).steps.find((step) => step.toolName === unsure.name)!
        const lines = yield* nextLines("r-2")
        expect(lines).toEqual([
          `next: ask the provider whether this undo happened: ${unsureStep.stepId} (undo unknown, key r-2/${unsureStep.stepId}/undo); if it did not, undo its effect by hand (if it did, nothing is left live); effect-saga does not run a settled undo again: once the effect is undone, say so (effect-saga resolve r-2 ${unsureStep.stepId} --applied --as WHO ${yield* position("r-2")}), then compensate the saga again, which ends it compensated once nothing else is dirty`
        ])
        expect(lines.join("\n")).not.toContain("checkStock")
      })
  )

  it.scoped(
    "a step a changed program did not reach, resolved as applied: show and resolve say to compensate, not resume, which fails",
    () =>
      Effect.gen(function* () {
        const db = freshFile()
        const { nextLines, position } = readsOf(db)
        const { made, renamed, stoppedInPay, tools } = renamedPastUnknown()
        // The first release's worker stopped while the payment was in flight: its outcome is unknown.
        yield* onFile(db, stoppedInPay("moved-1"))
        // The next release renamed the payment's tool: its program ends without reaching the old step.
        const stopped = yield* onFile(db, Saga.resume("moved-1", renamed))
        assert(stopped._tag === "NeedsAttention")
        const pay = stopped.unknown[0]!.stepId
        expect(stopped.unknown[0]!.reason).toContain("this run's program ended without reaching it")
        const at = yield* position("moved-1")
        const resolved = yield* cli(
          ...["resolve", "moved-1", pay, "--applied", "--result", '"pay-2"', "--as", "oncall", ...at.split(" ")],
          "--db",
          db
        )
        expect(resolved.code).toBe(0)
        const compensateNotResume = `do not resume the saga: its program's last run ended without reaching step ${pay} (a changed program), executed now, so a resume of that program fails with NonDeterminism at its end, writing nothing (only a release that makes it again could go on); compensate it instead`
        expect(resolved.stdout).toContain(
          `; ${compensateNotResume} (effect-saga compensate moved-1 --register MODULE --as WHO ${yield* position("moved-1")})`
        )
        expect(yield* nextLines("moved-1")).toEqual([
          `next: nothing is left to resolve, but ${compensateNotResume}: effect-saga compensate moved-1 --register MODULE --as WHO ${yield* position("moved-1")}`
        ])
        // What it says holds: the changed program, resumed, fails and writes nothing; a compensation undoes every call.
        const before = yield* position("moved-1")
        const resumed = yield* Effect.flip(onFile(db, Saga.resume("moved-1", renamed)))
        expect(resumed).toBeInstanceOf(SagaError.NonDeterminism)
        expect(yield* position("moved-1")).toBe(before)
        const compensate = Effect.zipRight(
          Effect.flatMap(Saga.Saga, (saga) => saga.register(tools)),
          Saga.compensate("moved-1")
        )
        expect((yield* onFile(db, compensate)).status).toBe("compensated")
        // In the reverse order of their EXECUTED entries: the payment's is the resolution's, the last.
        expect(made.slice(-4)).toEqual(["undo pay 2", "undo charge 3", "undo payV2 2", "undo reserve 1"])
      })
  )

  it.scoped(
    "two steps the changed program did not reach: resolving the first says to resolve the second before compensating",
    () =>
      Effect.gen(function* () {
        const db = freshFile()
        const { position } = readsOf(db)
        const { renamed, stoppedInPay } = renamedPastUnknown(true)
        yield* onFile(db, stoppedInPay("moved-3"))
        const stopped = yield* onFile(db, Saga.resume("moved-3", renamed))
        assert(stopped._tag === "NeedsAttention")
        const [pay, ship] = [...stopped.unknown]
          .sort((a, b) => a.toolName.localeCompare(b.toolName))
          .map((step) => step.stepId)
        const resolved = yield* cli(
          ...["resolve", "moved-3", pay!, "--applied", "--result", '"pay-2"', "--as", "oncall"],
          ...(yield* position("moved-3")).split(" "),
          "--db",
          db
        )
        expect(resolved.code).toBe(0)
        expect(resolved.stdout).toContain(
          `; resolve ${ship} too: it is unknown, and a compensation before then cannot undo it; then do not resume the saga: its program's last run ended without reaching step ${pay} (a changed program)`
        )
        expect(resolved.stdout).toContain("(effect-saga compensate moved-3 --register MODULE --as WHO)")
      })
  )

  it.scoped("resolved as not applied instead, the same saga compensates when resumed, as show says", () =>
    Effect.gen(function* () {
      const db = freshFile()
      const { nextLines, position } = readsOf(db)
      const { made, renamed, stoppedInPay } = renamedPastUnknown()
      yield* onFile(db, stoppedInPay("moved-2"))
      const stopped = yield* onFile(db, Saga.resume("moved-2", renamed))
      assert(stopped._tag === "NeedsAttention")
      const pay = stopped.unknown[0]!.stepId
      const at = yield* position("moved-2")
      const resolved = yield* cli(
        ...["resolve", "moved-2", pay, "--not-applied", "--as", "oncall", ...at.split(" ")],
        "--db",
        db
      )
      expect(resolved.code).toBe(0)
      expect(resolved.stdout).toContain(`; resume the saga: it compensates (step ${pay} failed`)
      expect(yield* nextLines("moved-2")).toEqual([
        expect.stringMatching(/^next: nothing is left to resolve: the saga compensates \(step /)
      ])
      expect(yield* onFile(db, Saga.resume("moved-2", renamed))).toMatchObject({ _tag: "Compensated" })
      expect(made.slice(-3)).toEqual(["undo charge 3", "undo payV2 2", "undo reserve 1"])
    })
  )
})
