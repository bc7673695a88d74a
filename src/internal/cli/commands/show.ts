/**
 * `effect-saga show SAGA [--format table|mermaid] [--json]`: a saga's status, steps and journal.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Effect from "effect/Effect"
import type { Entry } from "../../../Journal.js"
import { Journal } from "../../../Journal.js"
import * as Saga from "../../../Saga.js"
import * as Timeline from "../../../Timeline.js"
import { table } from "../../table.js"
import { exitIfDirty } from "../dirty.js"
import { UsageError } from "../failure.js"
import * as Mermaid from "../mermaid.js"
import { print, printJson } from "../output.js"
import { db, json, saga, withStore } from "../root.js"

const format = Options.choice("format", ["table", "mermaid"]).pipe(
  Options.withDescription("table: status, steps and the journal as a timeline; mermaid: a sequence diagram."),
  Options.withDefault("table" as const)
)

const header = (status: Saga.SagaStatus): ReadonlyArray<string> => [
  `saga ${status.sagaId}: ${status.status}`,
  `revision ${status.revision}  digest ${status.digest}`,
  `created ${status.createdAt}  updated ${status.updatedAt}`,
  `lease ${status.lease === null ? "none" : `${status.lease.owner} until ${status.lease.expiresAt}`}`
]

const steps = (status: Saga.SagaStatus): string =>
  table(
    ["step", "tool", "state", "undo"],
    status.steps.map((step) => [step.stepId, step.toolName, step.state, step.undo ?? ""])
  )

/** The outcome column: what the entry says happened (never the receipt), or that nothing did. */
const outcomeOf = (entry: Entry, status: Saga.SagaStatus, entries: ReadonlyArray<Entry>): string => {
  const detail = Timeline.detailOf(entry)
  if (entry.phase !== "INTENT") return detail
  const step = status.steps.find((known) => known.stepId === entry.stepId)
  const later = entries.some(
    (other) => other.seq > entry.seq && other.stepId === entry.stepId && other.phase === "INTENT"
  )
  return step?.state === "unknown" && !later ? "no outcome journaled: unknown" : detail
}

const timeline = (status: Saga.SagaStatus, entries: ReadonlyArray<Entry>): string =>
  table(
    ["seq", "time", "step", "tool", "phase", "outcome"],
    entries.map((entry) => [
      String(entry.seq),
      entry.at,
      entry.stepId ?? "",
      entry.toolName ?? "",
      entry.phase,
      outcomeOf(entry, status, entries)
    ])
  )

/** What the operator may do next, with the position they saw. */
const next = (status: Saga.SagaStatus): ReadonlyArray<string> => {
  const at = `--revision ${status.revision} --digest ${status.digest}`
  const waiting = status.steps.filter((step) => step.state === "awaiting_approval")
  const unknown = status.steps.filter((step) => step.state === "unknown")
  return [
    ...waiting.map(
      (step) => `next: effect-saga approve|reject ${status.sagaId} ${step.stepId} --as WHO ${at}, then resume the saga`
    ),
    ...unknown.map(
      (step) =>
        `next: effect-saga resolve ${status.sagaId} ${step.stepId} --applied --result JSON|--not-applied --as WHO ${at}`
    )
  ]
}

const render = (status: Saga.SagaStatus, entries: ReadonlyArray<Entry>): string =>
  [
    ...header(status),
    "",
    status.steps.length === 0 ? "no steps" : steps(status),
    "",
    timeline(status, entries),
    ...(next(status).length === 0 ? [] : ["", ...next(status)])
  ].join("\n")

/**
 * The `show` command.
 *
 * @since 0.1.0
 * @category commands
 */
export const show = Command.make("show", { db, json, format, saga }, (options) =>
  Effect.gen(function* () {
    if (options.json && options.format === "mermaid") {
      return yield* new UsageError({ message: "--json and --format mermaid exclude each other: choose one" })
    }
    yield* withStore(
      options.db,
      Effect.gen(function* () {
        const status = yield* Saga.status(options.saga)
        const entries = yield* Effect.flatMap(Journal, (journal) => journal.read(options.saga))
        if (options.json) yield* printJson({ saga: status, entries })
        else if (options.format === "mermaid") yield* print(Mermaid.diagram(status.sagaId, entries))
        else yield* print(render(status, entries))
        yield* exitIfDirty([status])
      }),
      { access: "read" }
    )
  })
).pipe(
  Command.withDescription(
    "Show a saga: its status, revision and digest, its steps, and its journal (seq, time, step, tool, phase, outcome). Exits 1 if it is compensation_failed or needs_attention."
  )
)
