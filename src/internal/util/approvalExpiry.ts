/**
 * Where an approved step's approval stands, by its journaled expiry (`Timeline.approvedUntil`): what
 * the CLI's `show` and the console's saga page tell an operator before the saga is resumed.
 *
 * @since 0.4.0
 */
import { millisOf } from "./isoTime.js"
import { shellWord } from "./shellWord.js"

/**
 * `Open`: the approval names no expiry (an `approvalTtl` of the tool or the worker, which the journal
 * does not carry, may still end it); `Holds` until `until`; `Lapsed`: `until` is past at `now`, or
 * names no time a worker can read (`readable: false`), which a resume takes as expired too.
 *
 * @since 0.4.0
 * @category models
 */
export type Standing =
  | { readonly _tag: "Open" }
  | { readonly _tag: "Holds"; readonly until: string }
  | { readonly _tag: "Lapsed"; readonly until: string; readonly readable: boolean }

/**
 * The standing of an approval whose journaled expiry is `until` at `now` (epoch milliseconds), as a
 * resume judges it: expired at or after its expiry, or when the expiry is unreadable.
 *
 * @since 0.4.0
 * @category approvals
 */
export const standing = (until: string | undefined, now: number): Standing => {
  if (until === undefined) return { _tag: "Open" }
  const millis = millisOf(until)
  if (millis !== undefined && millis > now) return { _tag: "Holds", until }
  return { _tag: "Lapsed", until, readable: millis !== undefined }
}

/**
 * How a lapsed approval is said: `lapsed at T`, or that its expiry names no time a worker can read.
 *
 * @since 0.4.0
 * @category approvals
 */
export const lapsedText = (lapsed: Extract<Standing, { readonly _tag: "Lapsed" }>): string =>
  lapsed.readable
    ? `lapsed at ${lapsed.until}`
    : `names an expiry no worker can read (${JSON.stringify(lapsed.until)}), taken as lapsed`

/**
 * What a saga whose approval lapsed comes to when it is resumed as it is.
 *
 * @since 0.5.0
 * @category approvals
 */
export const sagaResumedLapsed = "resumed as it is, the saga journals EXPIRED and compensates"

/**
 * What an explicit undo run whose approval lapsed comes to when it is asked for again.
 *
 * @since 0.5.0
 * @category approvals
 */
export const runAskedLapsed = "the run journals EXPIRED and answers failed"

/**
 * The command that renews a lapsed approval, with the placeholders an operator fills in.
 *
 * @since 0.5.0
 * @category approvals
 */
export const renewCommand = (sagaId: string, stepId: string): string =>
  `effect-saga renew-approval ${shellWord(sagaId)} ${shellWord(stepId)} --as WHO --expires-at TIME`
