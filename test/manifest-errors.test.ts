/**
 * What `Toolkit.call` of a manifest's tool fails with, as typed (`Toolkit.UnknownTool`,
 * `Compensable.InvalidInput` and `Manifest.ManifestToolError`): each of its tags is reached by a real
 * handler process, and the program sees no error outside them.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { type Manifest, Saga, Toolkit } from "../src/index.js"
import { handlers, loadToolkit, memoryServices, writeManifest } from "./fixtures/manifest-tools.js"

const root = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-manifest-errors-"))
afterAll(() => fs.rmSync(root, { recursive: true, force: true }))

/** misbehave.mjs, answering as its input's `mode` says: as a write, and as a read. */
const binding = (kind: "external_write" | "read") => ({
  handler: { kind: "process", command: "node", args: [path.join(handlers, "misbehave.mjs")] },
  input: { type: "json" },
  output: { type: "string" },
  timeout_ms: 30_000,
  max_payload_bytes: 4096,
  effect_contract: { kind, retry_mode: "none" }
})

type CallError = Toolkit.CallError<Manifest.ManifestToolkit["tools"]>

/** Every tag the type names, and only those (the compiler checks both ways). */
const declared: Record<CallError["_tag"], true> = {
  UnknownTool: true,
  InvalidInput: true,
  PayloadTooLarge: true,
  InvalidIdentifier: true,
  OutcomeFailed: true,
  OutcomeUnknown: true,
  OutcomePartial: true
}

describe("the errors of a manifest's tool, as typed", () => {
  it.live("each tag the type names is reached, and the program sees no other error", () =>
    Effect.gen(function* () {
      const toolkit = yield* loadToolkit(
        writeManifest(root, { write: binding("external_write"), look: binding("read") })
      )
      const calls: ReadonlyArray<readonly [string, unknown, { readonly key: string }?]> = [
        ["nothing", { mode: "failed" }],
        ["write", { big: 1n }],
        ["write", { mode: "x".repeat(5000) }],
        ["write", { mode: "failed" }, { key: "a/b" }],
        ["write", { mode: "failed" }],
        ["look", { mode: "unknown" }],
        ["look", { mode: "raw", line: '{"outcome":"partial","message":"half of it"}' }]
      ]
      const seen: Array<CallError> = []
      for (const [i, [name, input, options]] of calls.entries()) {
        const call = Effect.catchAll(Toolkit.call(toolkit, name, input, options), (error) =>
          Effect.sync(() => seen.push(error))
        )
        yield* Effect.provide(Saga.run(`call-${i}`, call), memoryServices(toolkit))
      }
      expect(seen.map((error) => error._tag)).toEqual([
        "UnknownTool",
        "InvalidInput",
        "PayloadTooLarge",
        "InvalidIdentifier",
        "OutcomeFailed",
        "OutcomeUnknown",
        "OutcomePartial"
      ])
      expect(new Set(seen.map((error) => error._tag))).toEqual(new Set(Object.keys(declared)))
    })
  )
})
