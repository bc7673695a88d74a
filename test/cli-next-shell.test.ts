/**
 * `show`'s `next:` lines pasted into a shell: a saga id or step key holding a space, `$(…)`, a quote
 * or a bidi override is quoted so that the shell reads back the very id, runs nothing, and the
 * command does what the line says.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, assert, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Saga } from "../src/index.js"
import { shellWord } from "../src/internal/util/shellWord.js"
import { cliInProcess as cli } from "./fixtures/cli-in-process.js"
import { sendWireTransfer } from "./fixtures/cli-tools.js"
import { onFile } from "./fixtures/worker-on-file.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-cli-shell-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

/** The words bash reads in `command` (run in `dir`: anything it would run, it runs there). */
const wordsOf = (command: string): Array<string> =>
  execFileSync("bash", ["-c", `printf '%s\\0' ${command}`], { cwd: dir })
    .toString()
    .split("\0")
    .slice(0, -1)

const ids = ["order 7", "o$(touch pwned)", "it's `here`", "rtl\u202edlrow"]

describe("effect-saga show: a next line pasted into a shell", { timeout: 60_000 }, () => {
  it("shellWord gives back every id as one word", () => {
    for (const id of [...ids, "plain-1", "tool:key#1", "a\\b'c\u2028d", "#x", ""]) {
      expect(wordsOf(shellWord(id))).toEqual([id])
    }
    expect(fs.existsSync(path.join(dir, "pwned"))).toBe(false)
  })

  it.scoped.each(ids)(
    "saga %j awaiting approval: the approve line, pasted, approves that saga and runs nothing else",
    (sagaId) =>
      Effect.gen(function* () {
        const db = path.join(dir, `${ids.indexOf(sagaId)}.db`)
        assert(
          (yield* onFile(db, Saga.run(sagaId, sendWireTransfer({ amount: 5, to: "acme" }))))._tag === "AwaitingApproval"
        )
        const shown = yield* cli("show", sagaId, "--db", db)
        const line = shown.stdout.split("\n").find((candidate) => candidate.startsWith("next: effect-saga approve "))!
        const command = line.slice("next: effect-saga ".length, line.search(/(?<=--digest \w+)(?!\w)/))
        const args = wordsOf(command).map((word) => (word === "WHO" ? "oncall" : word))
        expect(args.slice(0, 2)).toEqual(["approve", sagaId])
        expect(fs.existsSync(path.join(dir, "pwned"))).toBe(false)
        const approved = yield* cli(...args, "--db", db)
        expect(approved.code, approved.stderr).toBe(0)
        const step = (yield* onFile(db, Saga.status(sagaId))).steps[0]!
        expect(step.state).toBe("approved")
      })
  )

  it.scoped(
    "an id that begins with -: refused with a line that says why (options first, ids after --), and the -- form approves",
    () =>
      Effect.gen(function* () {
        const db = path.join(dir, "dash.db")
        const sagaId = "-x y"
        assert(
          (yield* onFile(db, Saga.run(sagaId, sendWireTransfer({ amount: 5, to: "acme" }))))._tag === "AwaitingApproval"
        )
        const stepId = (yield* onFile(db, Saga.status(sagaId))).steps[0]!.stepId
        const refused = yield* cli("approve", sagaId, stepId, "--as", "oncall", "--db", db)
        expect(refused.code).toBe(2)
        expect(refused.stderr).toContain(
          "effect-saga: the command line could not be read: an argument that begins with - is read as options; give the options first, then -- and the ids (effect-saga COMMAND --option … -- SAGA STEP)"
        )
        expect((yield* onFile(db, Saga.status(sagaId))).steps[0]!.state).toBe("awaiting_approval")
        const approved = yield* cli("approve", "--as", "oncall", "--db", db, "--", sagaId, stepId)
        expect(approved.code, approved.stderr).toBe(0)
        expect((yield* onFile(db, Saga.status(sagaId))).steps[0]!.state).toBe("approved")
      })
  )
})
