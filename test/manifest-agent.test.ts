import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { NodeContext } from "@effect/platform-node"
import { afterAll, assert, describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Logger } from "effect"
import * as Agent from "../src/Agent.js"
import { Approval, Journal, Manifest, Saga } from "../src/index.js"
import * as Scripted from "./fixtures/agent-scripted.js"
import { loadToolkit, reservationBindings, writeManifest } from "./fixtures/manifest-tools.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-manifest-agent-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const readEvents = (world: string) =>
  fs
    .readFileSync(world, "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line).event as string)

describe("a manifest's tools given to an agent", () => {
  it.live("the model's call runs the binding's process as a step; Saga.compensate runs the inverse's", () =>
    Effect.gen(function* () {
      const world = path.join(dir, "world.ndjson")
      const toolkit = yield* loadToolkit(writeManifest(dir, reservationBindings(world)))
      const { agent, layer } = yield* Agent.fromManifest(toolkit)
      expect(agent.policies.createReservation).toMatchObject({
        reversibility: "compensatable",
        retryMode: "idempotency-key",
        undo: true,
        reason: `set by the manifest binding's effect_contract (kind "external_write", compensated by releaseReservation)`
      })
      const script: Scripted.Script = (question) =>
        question.turn === 1
          ? Scripted.calls(Scripted.call("call-1", "createReservation", { sku: "A-1", quantity: 2 }))
          : Scripted.says(`Reserved: ${JSON.stringify(question.results.get("call-1")?.result)}`)
      const services = Layer.mergeAll(layer, Agent.layerModel.pipe(Layer.provide(Scripted.layer(script).layer))).pipe(
        Layer.provideMerge(Saga.layer),
        Layer.provideMerge(Layer.mergeAll(Journal.layerMemory, Approval.layerMemory, NodeContext.layer))
      )
      const { result, report, entries } = yield* Effect.gen(function* () {
        const result = yield* Saga.run("agent-1", Agent.loop({ prompt: "Hold A-1 twice", toolkit: agent.toolkit }))
        const report = yield* Saga.compensate("agent-1")
        const entries = yield* Effect.flatMap(Journal.Journal, (journal) => journal.read("agent-1"))
        return { result, report, entries }
      }).pipe(Effect.provide(services))

      assert(result._tag === "Completed")
      expect(result.value.text).toBe('Reserved: {"reservationId":"res-1"}')
      expect(report.undone).toEqual([expect.objectContaining({ toolName: "createReservation", outcome: "completed" })])
      expect(readEvents(world)).toEqual(["created", "released"])
      const intent = entries.find((entry) => entry.phase === "INTENT" && entry.toolName === "createReservation")
      expect(intent?.stepId).toContain("call-1")
      expect(JSON.parse(intent!.payload!)).toMatchObject({ capabilities: ["network"] })
    })
  )

  // What Manifest.layer refuses when built, the agent's layer refuses too: on boot, not during a refund.
  const refusedWhenBuilt: ReadonlyArray<readonly [string, (bindings: any) => void, string]> = [
    [
      "a missing secret (of the inverse)",
      (bindings) => {
        bindings.releaseReservation.secrets = ["EFFECT_SAGA_TEST_NO_SUCH_SECRET"]
      },
      "$.bindings.releaseReservation.secrets[0]"
    ],
    [
      "a command that is no executable file",
      (bindings) => {
        bindings.releaseReservation.handler.command = "./handlers/nope.sh"
      },
      "$.bindings.releaseReservation.handler.command"
    ],
    [
      "a working folder that is a file",
      (bindings) => {
        bindings.createReservation.handler.cwd = "tools.manifest.json"
      },
      "$.bindings.createReservation.handler.cwd"
    ]
  ]
  for (const [what, mutate, expected] of refusedWhenBuilt) {
    it.effect(`its layer, when built, refuses ${what} → ${expected}`, () =>
      Effect.gen(function* () {
        const bindings = reservationBindings(path.join(dir, "unused.ndjson"))
        mutate(bindings)
        const toolkit = yield* loadToolkit(writeManifest(fs.mkdtempSync(path.join(dir, "refused-")), bindings))
        const { layer } = yield* Agent.fromManifest(toolkit)
        const built = layer.pipe(
          Layer.provideMerge(Saga.layer),
          Layer.provideMerge(Layer.mergeAll(Journal.layerMemory, Approval.layerMemory, NodeContext.layer))
        )
        const error = yield* Effect.flip(Effect.scoped(Layer.build(built)))
        assert(Manifest.isManifestError(error))
        expect(error.path).toBe(expected)
      })
    )
  }

  it.effect("a binding whose input is not an object cannot be an agent's tool: a ManifestError at its input", () =>
    Effect.gen(function* () {
      const bindings = reservationBindings(path.join(dir, "unused.ndjson"))
      ;(bindings.createReservation as any).input = { type: "string" }
      const toolkit = yield* loadToolkit(writeManifest(path.join(dir, "string-input"), bindings))
      const error = yield* Effect.flip(Agent.fromManifest(toolkit))
      assert(Manifest.isManifestError(error))
      expect(error.path).toBe("$.bindings.createReservation.input")
      expect(error.reason).toBe(
        'an agent\'s tool takes an object: declare the input as { "type": "object", … }, or as a { "ref": … } to a Schema.Struct'
      )
    })
  )

  it.effect("an external write with no compensation is a gap, and its policy's reason says it has none", () =>
    Effect.gen(function* () {
      const bindings = reservationBindings(path.join(dir, "unused.ndjson"))
      ;(bindings.createReservation.effect_contract as any).compensation = undefined
      const toolkit = yield* loadToolkit(writeManifest(path.join(dir, "no-undo"), bindings))
      const { agent } = yield* Agent.fromManifest(toolkit)
      expect(agent.policies.createReservation).toMatchObject({
        gap: true,
        undo: false,
        reason:
          'set by the manifest binding\'s effect_contract (kind "external_write", no compensation: compensation skips it)'
      })
    })
  )

  it.effect("bindings that undo one another are refused: the agent would be offered none of them", () =>
    Effect.gen(function* () {
      const bindings = reservationBindings(path.join(dir, "unused.ndjson"))
      ;(bindings.releaseReservation as any).output = bindings.createReservation.input
      ;(bindings.releaseReservation.effect_contract as any).compensation = { tool: "createReservation" }
      ;(bindings.createReservation as any).output = bindings.releaseReservation.input
      const toolkit = yield* loadToolkit(writeManifest(path.join(dir, "ring"), bindings))
      const error = yield* Effect.flip(Agent.fromManifest(toolkit))
      assert(Manifest.isManifestError(error))
      expect(error.path).toBe("$.bindings.createReservation.effect_contract.compensation.tool")
      expect(error.reason).toBe(
        "createReservation, releaseReservation undo one another (createReservation → releaseReservation → createReservation): an agent is offered no binding that is another's inverse, so it would be offered none of them; give it a binding that no other undoes (a manifest of its own for the agent, say)"
      )
    })
  )

  it.effect("an inverse is none of the agent's tools: the model is not offered it, and it is no gap", () =>
    Effect.gen(function* () {
      const bindings = reservationBindings(path.join(dir, "unused.ndjson"))
      // Not an object: an inverse's input is the forward call's result, not a model's parameters.
      ;(bindings.releaseReservation as any).input = { type: "json" }
      const toolkit = yield* loadToolkit(writeManifest(path.join(dir, "inverse"), bindings))
      const { agent, layer } = yield* Agent.fromManifest(toolkit)
      expect(Object.keys(agent.policies)).toEqual(["createReservation"])
      const model = Scripted.layer(() => Scripted.says("Nothing to do."))
      const warnings: Array<string> = []
      const keeping = Logger.make(({ logLevel, message }) => {
        if (logLevel._tag === "Warning") warnings.push(String(message))
      })
      const services = Layer.mergeAll(layer, Agent.layerModel.pipe(Layer.provide(model.layer))).pipe(
        Layer.provideMerge(Saga.layer),
        Layer.provideMerge(Layer.mergeAll(Journal.layerMemory, Approval.layerMemory, NodeContext.layer))
      )
      const result = yield* Saga.run("agent-inverse", Agent.loop({ prompt: "Hello", toolkit: agent.toolkit })).pipe(
        Effect.provide(services),
        Effect.provide(Logger.replace(Logger.defaultLogger, keeping))
      )
      expect(result._tag).toBe("Completed")
      expect(model.questions.map((question) => question.tools)).toEqual([["createReservation"]])
      expect(warnings).toEqual([])
    })
  )
})
