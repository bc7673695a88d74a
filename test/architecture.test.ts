/**
 * The import rules of src/ (.dependency-cruiser.cjs, docs/architecture.md) hold, and the check that
 * enforces them can fail: it refuses a cycle of value imports and lets a type-only one through.
 */
import { execFile } from "node:child_process"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"

const root = fileURLToPath(new URL("..", import.meta.url))
const depcruise = path.join(root, "node_modules", ".bin", "depcruise")

// dependency-cruiser compiles what it reads: seconds on a busy machine, more than a test's default five.
/** Runs the dependency check on `target` with the project's rules: its exit code and output. */
const check = (target: string) =>
  Effect.async<{ readonly code: number; readonly output: string }>((resume) => {
    execFile(
      depcruise,
      [target, "--config", ".dependency-cruiser.cjs", "--output-type", "err"],
      { cwd: root },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1
        resume(Effect.succeed({ code, output: `${stdout}${stderr}` }))
      }
    )
  })

describe("the architecture's import rules", () => {
  it.effect(
    "src/ keeps them: no cycle of value imports, and every seam rule holds",
    () =>
      Effect.gen(function* () {
        const result = yield* check("src")
        expect(result.output).not.toContain("error")
        expect(result.code).toBe(0)
      }),
    { timeout: 60_000 }
  )

  it.effect(
    "the check fails on a deliberate cycle of value imports, naming the rule and both files",
    () =>
      Effect.gen(function* () {
        const result = yield* check("test/fixtures/architecture/value-cycle")
        expect(result.code).not.toBe(0)
        expect(result.output).toContain("no-value-cycle")
        expect(result.output).toContain("value-cycle/a.ts")
        expect(result.output).toContain("value-cycle/b.ts")
      }),
    { timeout: 60_000 }
  )

  it.effect(
    "a cycle through a type-only import is no cycle once compiled: the check lets it through",
    () =>
      Effect.gen(function* () {
        const result = yield* check("test/fixtures/architecture/type-cycle")
        expect(result.code).toBe(0)
      }),
    { timeout: 60_000 }
  )
})
