import { assert, describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Layer, Option, Schema } from "effect"
import { Approval, Authority, Compensable, Journal, Saga } from "../src/index.js"
import { makeMemoryJournal } from "../src/internal/journal/memory.js"
import * as Testing from "../src/Testing.js"
import { entriesOf, payloadOf, phasesOf } from "./fixtures/journal-reads.js"
import { reserveAndWire } from "./fixtures/reserve-wire.js"

const alice = { id: "alice" }
const bob = { id: "bob" }
const mallory = { id: "mallory" }

describe("Authority", () => {
  it.effect("a principal denied canApprove gets a typed Unauthorized and nothing is journaled", () =>
    Effect.gen(function* () {
      const { program } = reserveAndWire()
      const waiting = yield* Saga.run("order-1", program)
      assert(waiting._tag === "AwaitingApproval")
      const { stepId } = waiting.request
      const before = yield* entriesOf("order-1")
      const revision = (yield* Saga.status("order-1")).revision

      const denied = yield* Effect.flip(
        Saga.approve("order-1", stepId, { by: "mallory" }).pipe(Authority.withPrincipal(mallory))
      )

      expect(denied).toBeInstanceOf(Authority.Unauthorized)
      expect(denied).toMatchObject({
        _tag: "Unauthorized",
        principal: "mallory",
        action: "approve",
        sagaId: "order-1",
        stepId
      })
      expect(denied.message).toBe(`mallory may not approve saga order-1 (step ${stepId})`)
      expect(yield* entriesOf("order-1")).toEqual(before)
      expect((yield* Saga.status("order-1")).revision).toBe(revision)
      // The approval service was not asked either: the request still waits.
      expect((yield* Approval.pending).map((request) => request.stepId)).toEqual([stepId])
    }).pipe(
      Effect.provide(
        layerWith((principal, action) => Effect.succeed(action !== "approve" || principal.id !== "mallory"))
      )
    )
  )

  it.effect(
    "a principal who may reject but not compensate: reject is refused before anything is written, the request still waits",
    () =>
      Effect.gen(function* () {
        const { calls, program } = reserveAndWire()
        const waiting = yield* Saga.run("order-r", program)
        assert(waiting._tag === "AwaitingApproval")
        const reserve = (yield* Saga.status("order-r")).steps.find((step) => step.toolName === "reserve")!
        const before = yield* entriesOf("order-r")
        const denied = yield* Effect.flip(
          Saga.reject("order-r", waiting.request.stepId, { by: "Bob B.", reason: "wrong IBAN" }).pipe(
            Authority.withPrincipal(bob)
          )
        )
        expect(denied).toMatchObject({ _tag: "Unauthorized", action: "compensate", stepId: reserve.stepId })
        expect(yield* entriesOf("order-r")).toEqual(before)
        expect((yield* Approval.pending).map((request) => request.stepId)).toEqual([waiting.request.stepId])
        expect(calls.release).toBe(0)
        // One who may compensate rejects it, and the saga is undone.
        const report = yield* Saga.reject("order-r", waiting.request.stepId, {
          by: "Alice",
          reason: "wrong IBAN"
        }).pipe(Authority.withPrincipal(alice))
        expect(report.status).toBe("compensated")
      }).pipe(
        Effect.provide(
          layerWith((principal, action) => Effect.succeed(action !== "compensate" || principal.id !== "bob"))
        )
      )
  )

  it.effect(
    "reject whose compensate answer changes after its check: REJECTED stays, the undo does not start, the saga is left compensating",
    () =>
      Effect.gen(function* () {
        const { calls, program } = reserveAndWire()
        const waiting = yield* Saga.run("order-c", program)
        assert(waiting._tag === "AwaitingApproval")
        const reserve = (yield* Saga.status("order-c")).steps.find((step) => step.toolName === "reserve")!
        const denied = yield* Effect.flip(
          Saga.reject("order-c", waiting.request.stepId, { by: "Bob B.", reason: "wrong IBAN" }).pipe(
            Authority.withPrincipal(bob)
          )
        )
        expect(denied).toMatchObject({ _tag: "Unauthorized", action: "compensate", stepId: reserve.stepId })
        expect(calls.release).toBe(0)
        const phases = (yield* entriesOf("order-c")).map((entry) => entry.phase)
        expect(phases.slice(-2)).toEqual(["REJECTED", "SAGA_COMPENSATING"])
        expect((yield* Saga.status("order-c")).status).toBe("compensating")
        // One who may compensate finishes it: the undo runs once.
        const report = yield* Saga.compensate("order-c").pipe(Authority.withPrincipal(alice))
        expect(report.status).toBe("compensated")
        expect(calls.release).toBe(1)
      }).pipe(
        Effect.provide(
          // Bob's first compensate check (reject's, before it writes) is allowed; the next (the undo's) is not.
          (() => {
            let asked = 0
            return layerWith((principal, action) =>
              Effect.sync(() => action !== "compensate" || principal.id !== "bob" || asked++ === 0)
            )
          })()
        )
      )
  )

  it.effect(
    "reject asks compensate only of the undos its compensation runs: not of a step undone by compensateEffect",
    () =>
      Effect.gen(function* () {
        const { calls, program } = reserveAndWire()
        const waiting = yield* Saga.run("order-x", program)
        assert(waiting._tag === "AwaitingApproval")
        const reserve = (yield* Saga.status("order-x")).steps.find((step) => step.toolName === "reserve")!
        // Alice may not undo the reservation herself; it was undone on request (by someone who may).
        yield* Saga.compensateEffect(reserve.effectId)
        expect(calls.release).toBe(1)
        const report = yield* Saga.reject("order-x", waiting.request.stepId, { by: "Alice", reason: "no" }).pipe(
          Authority.withPrincipal(alice)
        )
        expect(report.status).toBe("compensated")
        expect(report.undone.map((step) => [step.toolName, step.outcome, step.detail])).toEqual([
          ["reserve", "completed", "by compensateEffect"]
        ])
        expect(calls.release).toBe(1)
      }).pipe(
        Effect.provide(
          layerWith((principal, action, _sagaId, stepId) =>
            Effect.succeed(!(principal.id === "alice" && action === "compensate" && stepId?.startsWith("reserve:")))
          )
        )
      )
  )

  it.effect(
    "reject does not ask compensate of an undo no tool here can run (reported unavailable, as its compensation does)",
    () =>
      Effect.gen(function* () {
        const store = Layer.mergeAll(
          Layer.succeed(Journal.Journal, makeMemoryJournal()),
          Layer.succeed(Approval.Approval, Approval.makeMemory())
        )
        const { program } = reserveAndWire()
        const waiting = yield* Effect.provide(Saga.run("order-u", program), Saga.layer.pipe(Layer.provide(store)))
        assert(waiting._tag === "AwaitingApproval")
        // Another process, where `reserve` is not registered, and Alice may not undo it.
        const elsewhere = Saga.layer.pipe(
          Layer.provideMerge(
            Layer.merge(
              store,
              Authority.layer((principal, action, _sagaId, stepId) =>
                Effect.succeed(!(principal.id === "alice" && action === "compensate" && stepId?.startsWith("reserve:")))
              )
            )
          )
        )
        const report = yield* Saga.reject("order-u", waiting.request.stepId, { by: "Alice", reason: "no" }).pipe(
          Authority.withPrincipal(alice),
          Effect.provide(elsewhere)
        )
        expect(report.status).toBe("compensation_failed")
        expect(report.undone.map((step) => [step.toolName, step.outcome])).toEqual([["reserve", "unavailable"]])
      })
  )

  it.effect("an approval records the principal who gave it; the saga then runs the step", () =>
    Effect.gen(function* () {
      const { calls, program } = reserveAndWire()
      const waiting = yield* Saga.run("order-2", program)
      assert(waiting._tag === "AwaitingApproval")
      yield* Authority.withPrincipal(Saga.approve("order-2", waiting.request.stepId, { by: "Alice A." }), alice)
      const approved = (yield* entriesOf("order-2")).at(-1)!
      expect(approved.phase).toBe("APPROVED")
      expect(payloadOf(approved)).toMatchObject({ by: "Alice A.", principal: "alice" })
      expect((yield* Saga.run("order-2", program))._tag).toBe("Completed")
      expect(calls.wire).toBe(1)
    }).pipe(
      Effect.provide(
        layerWith((principal, action) => Effect.succeed(action !== "approve" || principal.id !== "mallory"))
      )
    )
  )

  it.effect("rejections and resolutions record the principal too; without one it is anonymous", () =>
    Effect.gen(function* () {
      const { program, unknownProgram } = reserveAndWire()
      const waiting = yield* Saga.run("order-3", program)
      assert(waiting._tag === "AwaitingApproval")
      yield* Saga.reject("order-3", waiting.request.stepId, { by: "Bob B.", reason: "wrong IBAN" }).pipe(
        Authority.withPrincipal(bob)
      )
      const rejected = (yield* entriesOf("order-3")).find((entry) => entry.phase === "REJECTED")!
      expect(payloadOf(rejected)).toMatchObject({ by: "Bob B.", principal: "bob" })

      const lost = yield* Saga.run("order-4", unknownProgram).pipe(
        Effect.provide(Testing.faults({ tool: "reserve", fault: "unknown" }))
      )
      assert(lost._tag === "NeedsAttention")
      yield* Saga.resolve("order-4", lost.unknown[0]!.stepId, { outcome: "not-applied", by: "ops" })
      const resolved = (yield* entriesOf("order-4")).at(-1)!
      expect(resolved.phase).toBe("FAILED")
      expect(payloadOf(resolved)).toMatchObject({ resolvedBy: "ops", principal: "anonymous" })
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("a principal denied canReject or canResolve gets Unauthorized naming the step; nothing is journaled", () =>
    Effect.gen(function* () {
      const { program, unknownProgram } = reserveAndWire()
      const waiting = yield* Saga.run("order-5", program)
      assert(waiting._tag === "AwaitingApproval")
      const lost = yield* Saga.run("order-6", unknownProgram).pipe(
        Effect.provide(Testing.faults({ tool: "reserve", fault: "unknown" }))
      )
      assert(lost._tag === "NeedsAttention")
      const before = [yield* entriesOf("order-5"), yield* entriesOf("order-6")]
      const rejected = yield* Effect.flip(
        Saga.reject("order-5", waiting.request.stepId, { by: "mallory", reason: "because" }).pipe(
          Authority.withPrincipal(mallory)
        )
      )
      expect(rejected).toMatchObject({ _tag: "Unauthorized", action: "reject", stepId: waiting.request.stepId })
      const resolved = yield* Effect.flip(
        Saga.resolve("order-6", lost.unknown[0]!.stepId, { outcome: "not-applied", by: "mallory" }).pipe(
          Authority.withPrincipal(mallory)
        )
      )
      expect(resolved).toMatchObject({ _tag: "Unauthorized", action: "resolve", stepId: lost.unknown[0]!.stepId })
      expect([yield* entriesOf("order-5"), yield* entriesOf("order-6")]).toEqual(before)
    }).pipe(Effect.provide(layerWith((principal) => Effect.succeed(principal.id !== "mallory"))))
  )

  it.effect("the authority is asked before the journal is read: a denied principal learns nothing of a saga", () =>
    Effect.gen(function* () {
      const { program } = reserveAndWire()
      const asMallory = Authority.withPrincipal(mallory)
      const commands = {
        approve: Saga.approve("no-such-saga", "step", { by: "mallory" }),
        reject: Saga.reject("no-such-saga", "step", { by: "mallory", reason: "because" }),
        resolve: Saga.resolve("no-such-saga", "step", { outcome: "not-applied", by: "mallory" }),
        renewApproval: Saga.renewApproval("no-such-saga", "step", { by: "mallory" }),
        compensate: Saga.compensate("no-such-saga"),
        run: Effect.asVoid(Saga.run("no-such-saga", program)),
        resume: Effect.asVoid(Saga.resume("no-such-saga", program))
      }
      for (const [name, command] of Object.entries(commands)) {
        const error = yield* Effect.flip(
          asMallory(command as Effect.Effect<unknown, { readonly _tag: string }, Saga.Saga>)
        )
        expect(error, name).toMatchObject({ _tag: "Unauthorized", sagaId: "no-such-saga" })
      }
      expect(yield* entriesOf("no-such-saga")).toEqual([])
    }).pipe(Effect.provide(layerWith((principal) => Effect.succeed(principal.id !== "mallory"))))
  )

  it.effect.each([
    ["the text false", "false"],
    ["1", 1],
    ["undefined", undefined],
    ["an object", {}]
  ] as const)(
    "an answer that is not a boolean (%s, as an untyped store's row gives) is a denial: no tool runs, nothing is journaled",
    ([, answer]) =>
      Effect.gen(function* () {
        const { program, calls } = reserveAndWire()
        const error = yield* Effect.flip(Saga.run("untyped-answer", program))
        expect(error).toMatchObject({ _tag: "Unauthorized", action: "start", sagaId: "untyped-answer" })
        expect(calls).toEqual({ reserve: 0, release: 0, wire: 0 })
        expect(yield* entriesOf("untyped-answer")).toEqual([])
      }).pipe(Effect.provide(layerWith(() => Effect.succeed(answer as unknown as boolean))))
  )

  it.effect(
    "a permission revoked mid-run stops the saga before its next step: the run fails with Unauthorized, the saga is suspended, and an allowed principal finishes it",
    () => {
      const permissions = { aliceMayStart: true }
      const calls = { first: 0, second: 0 }
      const first = Compensable.make({
        name: "first",
        input: Schema.String,
        success: Schema.String,
        // The permission is revoked while the saga runs (say, an operator removed alice's role).
        execute: (input) =>
          Effect.sync(() => {
            permissions.aliceMayStart = false
            return `first-${input}-${++calls.first}`
          }),
        compensate: () => Effect.void
      })
      const second = Compensable.make({
        name: "second",
        input: Schema.String,
        success: Schema.String,
        execute: (input) => Effect.sync(() => `second-${input}-${++calls.second}`),
        compensate: () => Effect.void
      })
      const program = Effect.zipRight(first("a"), second("b"))
      return Effect.gen(function* () {
        const stopped = yield* Effect.flip(Saga.run("order-7", program).pipe(Authority.withPrincipal(alice)))

        expect(stopped).toMatchObject({ _tag: "Unauthorized", principal: "alice", action: "start", sagaId: "order-7" })
        expect(calls).toEqual({ first: 1, second: 0 })
        expect((yield* Saga.status("order-7")).status).toBe("suspended")
        expect((yield* entriesOf("order-7")).map((entry) => `${entry.toolName ?? "saga"} ${entry.phase}`)).toEqual([
          "saga SAGA_STARTED",
          "first INTENT",
          "first EXECUTED",
          "saga SAGA_SUSPENDED"
        ])
        // Still revoked: alice cannot resume it either, and nothing is written.
        const revision = (yield* Saga.status("order-7")).revision
        expect(yield* Effect.flip(Saga.resume("order-7", program).pipe(Authority.withPrincipal(alice)))).toMatchObject({
          _tag: "Unauthorized",
          action: "resume"
        })
        expect((yield* Saga.status("order-7")).revision).toBe(revision)

        const finished = yield* Saga.resume("order-7", program).pipe(Authority.withPrincipal(bob))
        expect(finished).toMatchObject({ _tag: "Completed", value: "second-b-1" })
        expect(calls).toEqual({ first: 1, second: 1 })
      }).pipe(
        Effect.provide(
          layerWith((principal, action) =>
            Effect.sync(
              () => principal.id !== "alice" || (action !== "start" && action !== "resume") || permissions.aliceMayStart
            )
          )
        )
      )
    }
  )

  it.effect("revoking canResume while a resumed saga runs stops it before its next step", () => {
    const permissions = { aliceMayResume: true }
    const calls = { reserve: 0, wire: 0, notify: 0 }
    const reserve = Compensable.make({
      name: "reserve",
      input: Schema.String,
      success: Schema.String,
      execute: (sku) => Effect.sync(() => `res-${sku}-${++calls.reserve}`),
      compensate: () => Effect.void
    })
    const wire = Compensable.make({
      name: "wire",
      input: Schema.Int,
      success: Schema.String,
      reversibility: "irreversible",
      execute: () =>
        Effect.sync(() => {
          permissions.aliceMayResume = false
          return `wire-${++calls.wire}`
        })
    })
    const notify = Compensable.make({
      name: "notify",
      input: Schema.String,
      success: Schema.String,
      execute: (to) => Effect.sync(() => `sent-${to}-${++calls.notify}`),
      compensate: () => Effect.void
    })
    const program = Effect.gen(function* () {
      yield* reserve("A-1")
      yield* wire(100)
      return yield* notify("customer")
    })
    return Effect.gen(function* () {
      const waiting = yield* Saga.run("order-8", program).pipe(Authority.withPrincipal(alice))
      assert(waiting._tag === "AwaitingApproval")
      yield* Saga.approve("order-8", waiting.request.stepId, { by: "bob" }).pipe(Authority.withPrincipal(bob))
      const stopped = yield* Effect.flip(Saga.resume("order-8", program).pipe(Authority.withPrincipal(alice)))
      expect(stopped).toMatchObject({ _tag: "Unauthorized", action: "resume", principal: "alice" })
      expect(calls).toEqual({ reserve: 1, wire: 1, notify: 0 })
      expect((yield* Saga.status("order-8")).status).toBe("suspended")
      const finished = yield* Saga.resume("order-8", program).pipe(Authority.withPrincipal(bob))
      expect(finished).toMatchObject({ _tag: "Completed", value: "sent-customer-1" })
      expect(calls).toEqual({ reserve: 1, wire: 1, notify: 1 })
    }).pipe(
      Effect.provide(
        layerWith((principal, action) =>
          Effect.sync(() => principal.id !== "alice" || action !== "resume" || permissions.aliceMayResume)
        )
      )
    )
  })

  it.effect(
    "canCompensate is asked before each undo: denied, the undo never runs and the run fails with Unauthorized; an allowed operator finishes it",
    () =>
      Effect.gen(function* () {
        const undone: Array<string> = []
        const book = Compensable.make({
          name: "book",
          input: Schema.String,
          success: Schema.String,
          execute: (room) => Effect.succeed(`booking-${room}`),
          compensate: (ctx) => Effect.sync(() => undone.push(ctx.result))
        })
        const program = Effect.zipRight(book("12"), Effect.fail("overbooked"))
        const stopped = yield* Effect.flip(Saga.run("order-9", program).pipe(Authority.withPrincipal(alice)))
        const stepId = (yield* Saga.status("order-9")).steps[0]!.stepId
        expect(stopped).toMatchObject({ _tag: "Unauthorized", principal: "alice", action: "compensate", stepId })
        expect(undone).toEqual([])
        expect(yield* phasesOf("order-9", stepId)).toEqual(["INTENT", "EXECUTED"])

        // alice may not ask for it as a command either: refused before anything is read or written.
        const revision = (yield* Saga.status("order-9")).revision
        expect(yield* Effect.flip(Saga.compensate("order-9").pipe(Authority.withPrincipal(alice)))).toMatchObject({
          _tag: "Unauthorized",
          action: "compensate",
          stepId: null
        })
        const effectId = (yield* Saga.status("order-9")).steps[0]!.effectId
        expect(yield* Effect.flip(Saga.compensateEffect(effectId).pipe(Authority.withPrincipal(alice)))).toMatchObject({
          _tag: "Unauthorized",
          action: "compensate",
          stepId
        })
        expect((yield* Saga.status("order-9")).revision).toBe(revision)
        expect(yield* entriesOf(`${effectId}/compensate-effect`)).toEqual([])

        const report = yield* Saga.compensate("order-9").pipe(Authority.withPrincipal(bob))
        expect(report).toMatchObject({ status: "compensated", undone: [{ stepId, outcome: "completed" }] })
        expect(undone).toEqual(["booking-12"])
      }).pipe(
        Effect.provide(
          layerWith((principal, action) => Effect.succeed(action !== "compensate" || principal.id !== "alice"))
        )
      )
  )

  it.effect(
    "withPrincipal provides the caller's identity (data-first and data-last); without one it is anonymous",
    () =>
      Effect.gen(function* () {
        expect(yield* Authority.currentPrincipal).toEqual(Authority.anonymous)
        expect(yield* Authority.withPrincipal(Authority.currentPrincipal, alice)).toEqual(alice)
        expect(yield* Authority.currentPrincipal.pipe(Authority.withPrincipal(bob))).toEqual(bob)
        // The innermost principal wins.
        expect(
          yield* Authority.currentPrincipal.pipe(Authority.withPrincipal(bob), Authority.withPrincipal(alice))
        ).toEqual(bob)
      })
  )

  it.effect("Authority.make asks one decision for every action, with the saga and the step; allowAll allows all", () =>
    Effect.gen(function* () {
      const asked: Array<[string, Authority.Action, string, string | undefined]> = []
      const authority = Authority.make((principal, action, sagaId, stepId) =>
        Effect.sync(() => {
          asked.push([principal.id, action, sagaId, stepId])
          return action !== "resolve"
        })
      )
      const actions: ReadonlyArray<Authority.Action> = ["start", "resume", "approve", "reject", "resolve", "compensate"]
      const answers = yield* Effect.forEach(actions, (action) =>
        Effect.either(Authority.check(authority, action, "s-1", action === "start" ? undefined : "step-1"))
      ).pipe(Authority.withPrincipal(alice))
      expect(answers.map((answer) => answer._tag)).toEqual(["Right", "Right", "Right", "Right", "Left", "Right"])
      expect(asked).toEqual([
        ["alice", "start", "s-1", undefined],
        ["alice", "resume", "s-1", undefined],
        ["alice", "approve", "s-1", "step-1"],
        ["alice", "reject", "s-1", "step-1"],
        ["alice", "resolve", "s-1", "step-1"],
        ["alice", "compensate", "s-1", "step-1"]
      ])
      for (const action of actions) {
        expect(yield* Authority.check(Authority.allowAll, action, "s-1")).toEqual(Authority.anonymous)
      }
    })
  )
})

describe("operator commands are idempotent", () => {
  it.effect(
    "an exact replay of reject returns the first report and writes nothing; another command is a conflict",
    () =>
      Effect.gen(function* () {
        const { calls, program } = reserveAndWire()
        const waiting = yield* Saga.run("order-10", program)
        assert(waiting._tag === "AwaitingApproval")
        const { stepId } = waiting.request
        const first = yield* Saga.reject("order-10", stepId, { by: "carol", reason: "wrong IBAN" })
        const entries = yield* entriesOf("order-10")

        // Approval.layerMemory refuses a second decision: a replay that reached the handler would fail.
        const replay = yield* Saga.reject("order-10", stepId, { by: "carol", reason: "wrong IBAN" })
        expect(replay).toEqual(first)
        expect(yield* entriesOf("order-10")).toEqual(entries)
        expect(calls.release).toBe(1)

        for (const different of [
          Saga.reject("order-10", stepId, { by: "carol", reason: "another reason" }),
          Saga.reject("order-10", stepId, { by: "dave", reason: "wrong IBAN" }),
          Saga.approve("order-10", stepId, { by: "carol" })
        ]) {
          expect(yield* Effect.flip(different)).toMatchObject({
            _tag: "CommandConflict",
            sagaId: "order-10",
            stepId,
            answer: "rejected by carol"
          })
        }
        expect(yield* entriesOf("order-10")).toEqual(entries)
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("an exact replay of approve (same person, same expiry) writes nothing; another expiry is a conflict", () =>
    Effect.gen(function* () {
      const { program } = reserveAndWire()
      const waiting = yield* Saga.run("order-11", program)
      assert(waiting._tag === "AwaitingApproval")
      const { stepId } = waiting.request
      const options = { by: "alice", expiresAt: "2030-01-01T00:00:00.000Z" }
      yield* Saga.approve("order-11", stepId, options)
      const entries = yield* entriesOf("order-11")
      yield* Saga.approve("order-11", stepId, options)
      expect(yield* entriesOf("order-11")).toEqual(entries)
      const other = yield* Effect.flip(Saga.approve("order-11", stepId, { by: "alice" }))
      expect(other).toMatchObject({ _tag: "CommandConflict", answer: "approved by alice" })
      const rejected = yield* Effect.flip(Saga.reject("order-11", stepId, { by: "alice", reason: "changed my mind" }))
      expect(rejected).toMatchObject({ _tag: "CommandConflict", answer: "approved by alice" })
      expect(yield* entriesOf("order-11")).toEqual(entries)
    }).pipe(Effect.provide(Testing.layer))
  )

  it.effect(
    "an exact replay of resolve writes nothing; resolving it another way or with another result is a conflict",
    () =>
      Effect.gen(function* () {
        const { unknownProgram } = reserveAndWire()
        const lost = yield* Saga.run("order-12", unknownProgram).pipe(
          Effect.provide(Testing.faults({ tool: "reserve", fault: "unknown" }))
        )
        assert(lost._tag === "NeedsAttention")
        const stepId = lost.unknown[0]!.stepId
        const resolution = { outcome: "applied", by: "erin", result: "res-found" } as const
        yield* Saga.resolve("order-12", stepId, resolution)
        const entries = yield* entriesOf("order-12")
        yield* Saga.resolve("order-12", stepId, resolution)
        expect(yield* entriesOf("order-12")).toEqual(entries)
        for (const different of [
          { outcome: "applied", by: "erin", result: "res-other" } as const,
          { outcome: "applied", by: "frank", result: "res-found" } as const,
          { outcome: "not-applied", by: "erin" } as const
        ]) {
          expect(yield* Effect.flip(Saga.resolve("order-12", stepId, different))).toMatchObject({
            _tag: "CommandConflict",
            answer: "resolved as applied by erin"
          })
        }
        expect(yield* entriesOf("order-12")).toEqual(entries)
        expect(yield* Saga.run("order-12", unknownProgram)).toMatchObject({ _tag: "Completed", value: "res-found" })
      }).pipe(Effect.provide(Testing.layer))
  )

  it.effect("an exact replay is a pure read even when it names a position the saga has moved on from", () =>
    Effect.gen(function* () {
      const { program } = reserveAndWire()
      const waiting = yield* Saga.run("order-13", program)
      assert(waiting._tag === "AwaitingApproval")
      const seen = yield* Saga.status("order-13")
      const { stepId } = waiting.request
      yield* Saga.reject("order-13", stepId, {
        by: "carol",
        reason: "no",
        revision: seen.revision,
        digest: seen.digest
      })
      const entries = yield* entriesOf("order-13")
      const replay = yield* Saga.reject("order-13", stepId, {
        by: "carol",
        reason: "no",
        revision: seen.revision,
        digest: seen.digest
      })
      expect(replay.status).toBe("compensated")
      expect(yield* entriesOf("order-13")).toEqual(entries)
      expect(Option.isSome(yield* Effect.flatMap(Journal.Journal, (journal) => journal.get("order-13")))).toBe(true)
    }).pipe(Effect.provide(Testing.layer))
  )
  it("Unauthorized.action is an Action: another text does not decode, and a switch on it is exhaustive", () => {
    const decode = Schema.decodeUnknownEither(Authority.Unauthorized)
    const fields = { _tag: "Unauthorized", principal: "mallory", sagaId: "order-1", stepId: null }
    expect(decode({ ...fields, action: "approve" })._tag).toBe("Right")
    expect(decode({ ...fields, action: "delete" })._tag).toBe("Left")
    const verb = (error: Authority.Unauthorized): string => {
      switch (error.action) {
        case "start":
        case "resume":
        case "approve":
        case "reject":
        case "resolve":
        case "compensate":
          return error.action
      }
    }
    expect(verb(new Authority.Unauthorized({ ...fields, action: "reject" }))).toBe("reject")
  })
})

describe("an Authority the Saga service would never ask", () => {
  const stores = Layer.mergeAll(Journal.layerMemory, Approval.layerMemory)
  const denyAll = Authority.layer(() => Effect.succeed(false))
  const allowedEverything = /Saga\.layer was built without one \(so it allows everyone, Authority\.allowAll\)/
  const another = /not the one Saga\.layer was built with/
  const died = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.map(Effect.exit(effect), (exit) => {
      assert(exit._tag === "Failure")
      const defect = Option.getOrThrow(Cause.dieOption(exit.cause)) as Error
      expect(defect.message).toMatch(
        /nothing was read, run or written: provide it to the layer instead: Saga\.layer\.pipe\(Layer\.provide\(YourAuthority\)\)/
      )
      return defect.message
    })

  it.effect("merged beside Saga.layer instead of provided to it: every call dies, and nothing runs or is written", () =>
    Effect.gen(function* () {
      const { calls, program } = reserveAndWire()
      expect(yield* died(Saga.run("order-m", program))).toMatch(allowedEverything)
      expect(yield* died(Saga.resume("order-m", program))).toMatch(allowedEverything)
      expect(yield* died(Saga.compensate("order-m"))).toMatch(allowedEverything)
      expect(yield* died(Saga.approve("order-m", "s", { by: "mallory" }))).toMatch(allowedEverything)
      expect(yield* died(Saga.compensateEffect("order-m/s"))).toMatch(allowedEverything)
      expect(calls).toEqual({ reserve: 0, release: 0, wire: 0 })
      expect(yield* entriesOf("order-m")).toEqual([])
    }).pipe(Effect.provide(Layer.mergeAll(Saga.layer.pipe(Layer.provideMerge(stores)), denyAll)))
  )

  it.effect("Authority.allowAll beside a layer built without one is the layer's own: no mistake", () =>
    Effect.gen(function* () {
      const { program } = reserveAndWire()
      expect((yield* Saga.run("order-a", program))._tag).toBe("AwaitingApproval")
    }).pipe(Effect.provide(Layer.mergeAll(Saga.layer.pipe(Layer.provideMerge(stores)), Authority.layerAllowAll)))
  )

  it.effect("provided to one call, while the layer was built with another: the call dies", () =>
    Effect.gen(function* () {
      const { program } = reserveAndWire()
      expect(yield* died(Saga.run("order-o", program).pipe(Effect.provide(denyAll)))).toMatch(another)
      expect(yield* entriesOf("order-o")).toEqual([])
      // The layer's own, seen again in the call's context (Layer.provideMerge), is no mistake.
      expect((yield* Saga.run("order-o", program))._tag).toBe("AwaitingApproval")
    }).pipe(Effect.provide(layerWith(() => Effect.succeed(true))))
  )
})

/** `Saga.layer` over in-memory stores and an authority from `decide`, with every service exposed. */
const layerWith = (
  decide: (
    principal: Authority.Principal,
    action: Authority.Action,
    sagaId: string,
    stepId: string | undefined
  ) => Effect.Effect<boolean>
) => layerWithAuthority(Authority.layer(decide))

const layerWithAuthority = (authority: Layer.Layer<Authority.Authority>) =>
  Saga.layer.pipe(Layer.provideMerge(Layer.mergeAll(Journal.layerMemory, Approval.layerMemory, authority)))
