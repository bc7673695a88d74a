import { readFileSync } from "node:fs"
import { describe, expect, it } from "@effect/vitest"

const read = (path: string) => readFileSync(new URL(`../${path}`, import.meta.url), "utf8")

describe("README", () => {
  it("opens with the demo command, then the test command", () => {
    const commands = read("README.md")
      .match(/```sh\n([\s\S]*?)```/)![1]!
      .split("\n")
    expect(commands[0]).toMatch(/^npm install && npm run demo/)
    expect(commands[1]).toMatch(/^npm test/)
  })

  it("shows the quick start that examples/quickstart.ts compiles and runs", () => {
    const quickStart = read("README.md").match(/## Quick start\n\n```ts\n([\s\S]*?)```/)![1]!
    // The README declares the services it calls (so that the snippet type-checks on its own);
    // examples/quickstart.ts defines them, below the code the README shows.
    const standIns = /\n\/\/ Your own services \(stand-ins here\):\n(declare const [\s\S]*?\n}\n)+/
    expect(quickStart).toMatch(standIns)
    const program = quickStart.replace(standIns, "")
    expect(read("examples/quickstart.ts")).toContain(program)
    expect(program.split("\n").length).toBeLessThanOrEqual(40)
  })
})
