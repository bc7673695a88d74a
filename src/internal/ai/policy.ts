import * as Tool from "@effect/ai/Tool"
import * as Context from "effect/Context"
import type { Policy, PolicyOverride } from "../../Agent.js"
import type { Reversibility } from "../../Compensable.js"

/** An override made by effect-saga itself (a manifest's binding), saying where its reversibility comes from. */
type OverrideFrom = PolicyOverride & { readonly reason?: string }

/** A tool's policy: its annotations, then whether it has an undo, then the override. */
export const resolve = (tool: Tool.Any, hasUndo: boolean, override: PolicyOverride | undefined): Policy => {
  const readonly = override?.readonly ?? Context.get(tool.annotations, Tool.Readonly)
  const destructive = Context.get(tool.annotations, Tool.Destructive)
  const idempotent = Context.get(tool.annotations, Tool.Idempotent)
  const [reversibility, reason]: readonly [Reversibility, string] =
    override?.reversibility !== undefined
      ? [override.reversibility, (override as OverrideFrom).reason ?? "set by the tool's policy override"]
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
