/**
 * A tool's durations (`timeout`, `approvalTtl`), read when it is declared. `Compensable.make` does
 * not throw: a duration it cannot work with is a problem of the declaration, which `Toolkit.layer`
 * and the agent layers fail on at build and a direct call dies with (`DeclarationError`), as for
 * every other declaration problem.
 */
import type * as Duration from "effect/Duration"
import * as Either from "effect/Either"
import { APPROVAL_TTL_ZERO, positiveDurationOf } from "../util/options.js"

/** What a duration of zero would do, by option. */
const ZERO: Record<ToolDurationOption, string> = {
  timeout: "every call that had not answered at once would be abandoned, its outcome unknown",
  approvalTtl: APPROVAL_TTL_ZERO
}

/** The options of a tool that are durations. */
export type ToolDurationOption = "timeout" | "approvalTtl"

/** A tool's duration as given: read, or refused with the reason (naming the option and the value). */
export interface ToolDuration {
  readonly duration: Duration.Duration | undefined
  readonly problem: string | undefined
}

/** Reads the tool option `option` as given (`undefined`: not given). */
export const toolDuration = (option: ToolDurationOption, input: unknown): ToolDuration => {
  if (input === undefined) return { duration: undefined, problem: undefined }
  return Either.match(positiveDurationOf(input, ZERO[option]), {
    onLeft: (reason) => ({ duration: undefined, problem: `${option} ${reason}` }),
    onRight: (duration) => ({ duration, problem: undefined })
  })
}
