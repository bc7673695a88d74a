import { describe, expect, it } from "@effect/vitest"
import * as FastCheck from "effect/FastCheck"
import type { JournaledPrompt } from "../src/internal/ai/promptLog.js"
import { PromptLog } from "../src/internal/ai/promptLog.js"

/**
 * A saga run's model turns journal only what each conversation added (`PromptLog`). Whatever the
 * run asks — conversations that grow, start anew, branch from an earlier prompt, interleave — the
 * journal must still hold every prompt whole, and a replay must journal exactly the same.
 */
describe("the prompts a run journals", () => {
  it.prop(
    "every prompt can be rebuilt from the journal alone, and a replay journals the same",
    { asks: Asks },
    ({ asks }) => {
      const prompts = promptsOf(asks)
      const journaled = describeAll(prompts)
      prompts.forEach((prompt, index) => {
        expect(rebuild(journaled, index)).toEqual(prompt)
      })
      expect(describeAll(prompts)).toEqual(journaled)
      // A prompt journals only what it adds to the longest earlier prompt it extends.
      prompts.forEach((prompt, index) => {
        const extended = prompts.slice(0, index).filter((earlier) => isPrefix(earlier, prompt))
        const longest = Math.max(0, ...extended.map((earlier) => earlier.length))
        expect(journaled[index]!.appended.length).toBe(prompt.length - longest)
      })
    }
  )

  it("a prompt that differs in an earlier message does not continue the prompt it differs from", () => {
    const log = new PromptLog()
    log.describe(["hello", "answer"])
    const edited = log.describe(["hullo", "answer", "more"])
    expect(edited.continues).toBeUndefined()
    expect(edited.appended).toEqual(["hullo", "answer", "more"])
  })
})

/** One ask: extend the conversation `from` (an earlier ask, or none) by `add` messages. */
interface Ask {
  readonly from: number
  readonly keep: number
  readonly add: number
}

const Asks = FastCheck.array(
  FastCheck.record({
    from: FastCheck.nat({ max: 20 }),
    keep: FastCheck.nat({ max: 8 }),
    add: FastCheck.integer({ min: 1, max: 4 })
  }),
  { minLength: 1, maxLength: 20 }
)

/** The prompts of a run: each extends an earlier one (cut to `keep` messages), or starts anew. */
const promptsOf = (asks: ReadonlyArray<Ask>): Array<Array<string>> => {
  const prompts: Array<Array<string>> = []
  asks.forEach((ask, index) => {
    const base = ask.from < prompts.length ? prompts[ask.from]!.slice(0, ask.keep) : []
    const added = Array.from({ length: ask.add }, (_, n) => `message ${index}.${n}`)
    prompts.push([...base, ...added])
  })
  return prompts
}

const describeAll = (prompts: ReadonlyArray<ReadonlyArray<string>>): Array<JournaledPrompt> => {
  const log = new PromptLog()
  return prompts.map((prompt) => log.describe(prompt))
}

const isPrefix = (prefix: ReadonlyArray<string>, of: ReadonlyArray<string>) =>
  prefix.length <= of.length && prefix.every((message, index) => message === of[index])

/** Rebuilds the prompt of entry `index` from the entries before it, as an operator would. */
const rebuild = (journaled: ReadonlyArray<JournaledPrompt>, index: number): Array<unknown> => {
  const entry = journaled[index]!
  if (entry.continues === undefined) return [...entry.appended]
  const { digest, messages } = entry.continues
  const earlier = journaled.findIndex(
    (candidate, at) => at < index && candidate.digest === digest && candidate.messages === messages
  )
  expect(earlier).toBeGreaterThanOrEqual(0)
  return [...rebuild(journaled, earlier), ...entry.appended]
}
