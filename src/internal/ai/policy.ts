import * as Tool from "@effect/ai/Tool"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import type * as Schedule from "effect/Schedule"
import type { RetryMode, Reversibility } from "../engine/spec.js"

/** What a tool's saga policy may be told, overriding what its annotations say. */
export interface PolicyOverride {
  readonly reversibility?: Reversibility | undefined
  readonly readonly?: boolean | undefined
  readonly retryMode?: RetryMode | undefined
  readonly timeout?: Duration.DurationInput | undefined
  readonly retry?: Schedule.Schedule<any, any, never> | undefined
  readonly maxPayloadBytes?: number | undefined
  readonly approvalTtl?: Duration.DurationInput | undefined
  readonly receiptRequired?: boolean | undefined
  readonly approveExplicitUndo?: boolean | undefined
}

/** How the saga runs one tool, and why. */
export interface Policy {
  readonly toolName: string
  readonly reversibility: Reversibility
  readonly retryMode: RetryMode
  /** The tool only reads: it needs no undo, and compensation never reports it as a gap. */
  readonly readonly: boolean
  /** An undo was declared for it. */
  readonly undo: boolean
  /** Not read-only, not irreversible, and no undo: compensation skips it (`SKIPPED`), a gap worth auditing. */
  readonly gap: boolean
  readonly failureMode: Tool.FailureMode
  /** Why the reversibility is what it is, in words. */
  readonly reason: string
}

/** A tool's policy: its annotations, then whether it has an undo, then the override. */
export const resolve = (tool: Tool.Any, hasUndo: boolean, override: PolicyOverride | undefined): Policy => {
  const readonly = override?.readonly ?? Context.get(tool.annotations, Tool.Readonly)
  const destructive = Context.get(tool.annotations, Tool.Destructive)
  const idempotent = Context.get(tool.annotations, Tool.Idempotent)
  const [reversibility, reason]: readonly [Reversibility, string] =
    override?.reversibility !== undefined
      ? [override.reversibility, "set by the tool's policy override"]
      : readonly
        ? ["reversible", "Tool.Readonly: it changes nothing, so there is nothing to undo"]
        : hasUndo
          ? ["compensatable", "an undo is declared"]
          : destructive
            ? ["irreversible", "Tool.Destructive (@effect/ai's default) and no undo: it waits for an approval"]
            : ["compensatable", "not destructive and no undo: compensation skips it"]
  return {
    toolName: tool.name,
    reversibility,
    retryMode: override?.retryMode ?? (idempotent || readonly ? "idempotency-key" : "none"),
    readonly,
    undo: hasUndo,
    gap: !hasUndo && !readonly && reversibility !== "irreversible",
    failureMode: tool.failureMode,
    reason
  }
}
