import * as crypto from "node:crypto"

/** SHA-256 of a string's UTF-8 bytes, as lowercase hex. */
export const sha256 = (text: string): string => crypto.hash("sha256", text, "hex")

/** A prompt as journaled: its size and digest, and the messages its conversation added. */
export interface JournaledPrompt {
  /** How many messages the whole prompt has. */
  readonly messages: number
  /** SHA-256 over the SHA-256 of each encoded message: the whole prompt. */
  readonly digest: string
  /** The earlier prompt of this run that this one extends (its first `messages`), if any. */
  readonly continues?: { readonly messages: number; readonly digest: string }
  /** The messages after `continues`: the whole prompt when it continues nothing. */
  readonly appended: ReadonlyArray<unknown>
}

/**
 * The prompts a saga run has asked, so that each turn journals only what its conversation added
 * since the longest prompt asked before it: a conversation of n turns journals O(n) messages, not
 * O(n²). Every message is journaled once (in the first turn that asks it); the digest still covers
 * the whole prompt, so a replay that asks anything else is caught. A replay asks the same turns in
 * the same order, so it journals the same.
 */
export class PromptLog {
  private readonly asked: Array<{ readonly messages: number; readonly digest: string }> = []

  describe(messages: ReadonlyArray<unknown>): JournaledPrompt {
    const hashes = messages.map((message) => sha256(JSON.stringify(message)))
    const digestOf = (count: number) => sha256(hashes.slice(0, count).join(""))
    let continues: { readonly messages: number; readonly digest: string } | undefined
    for (const earlier of this.asked) {
      const longer = continues === undefined || earlier.messages > continues.messages
      if (longer && earlier.messages <= messages.length && digestOf(earlier.messages) === earlier.digest) {
        continues = earlier
      }
    }
    const whole = { messages: messages.length, digest: digestOf(messages.length) }
    this.asked.push(whole)
    return continues === undefined
      ? { ...whole, appended: messages }
      : { ...whole, continues, appended: messages.slice(continues.messages) }
  }
}

const logs = new WeakMap<object, PromptLog>()

/** The prompt log of a saga run (the `CurrentSaga` it provides). */
export const promptLogOf = (run: object): PromptLog => {
  let log = logs.get(run)
  if (log === undefined) {
    log = new PromptLog()
    logs.set(run, log)
  }
  return log
}
