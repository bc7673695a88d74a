/**
 * `effect-saga compensate-effect EFFECT --register MODULE… [--as WHO] [--json]`: undoes one applied
 * effect on an operator's request.
 *
 * @since 0.1.0
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { Journal } from "../../../Journal.js"
import * as Saga from "../../../Saga.js"
import { printable } from "../../util/printable.js"
import { shellWord } from "../../util/shellWord.js"
import { undoDetailSaid } from "../../util/undoSaid.js"
import { SomethingWrong } from "../failure.js"
import { print, printJson } from "../output.js"
import * as Parse from "../parse.js"
import { as, db, json, register, withStore } from "../root.js"
import * as Tools from "../tools.js"

const effect = Args.text({ name: "EFFECT" }).pipe(
  Args.withDescription("The effect id: the step's idempotency key, <sagaId>/<stepId> (show lists it).")
)

/**
 * The answer in one line; the undo's detail comes from outside, so it is shown `printable`. An
 * answer given without a run (the tool is not registered here, its receipt cannot be opened) says
 * that nothing was journaled: a process that has what was missing can undo the effect later.
 */
const render = (answer: Saga.EffectCompensation, journaled: boolean): string =>
  printable(
    answer._tag === "AwaitingApproval"
      ? `${answer.effectId}: the undo awaits an approval of its own (next: effect-saga approve ${shellWord(answer.runId)} ${shellWord(answer.request.stepId)} --as WHO)`
      : `${answer.effectId}: ${answer.outcome}${answer.detail === undefined ? "" : ` (${undoDetailSaid(answer.outcome, answer.detail)})`}; ${journaled ? `journaled as ${answer.runId}` : `nothing journaled${notHere(answer.detail)}`}`
  )

/** What to give an answer the undo's tool was missing for (`registry.ts`): the module that registers it. */
const notHere = (detail: string | undefined): string =>
  detail?.endsWith("is not registered in this process") === true
    ? ": ask again with --register MODULE, a module that registers the tool"
    : ""

/** Whether the undo's run was journaled: an answer given without one writes nothing. */
const hasRun = (runId: string) =>
  Effect.map(
    Effect.flatMap(Journal, (journal) => journal.get(runId)),
    Option.isSome
  )

/**
 * The `compensate-effect` command.
 *
 * @since 0.1.0
 * @category commands
 */
export const compensateEffect = Command.make(
  "compensate-effect",
  { db, as: as.pipe(Options.optional), register, json, effect },
  (options) =>
    Effect.flatMap(Parse.optionalPrincipal("--as", options.as), (by) =>
      withStore(
        options.db,
        Effect.gen(function* () {
          yield* Tools.register(options.register)
          const answer = yield* Saga.withInterruptibleUndos(Saga.compensateEffect(options.effect))
          yield* options.json ? printJson(answer) : print(render(answer, yield* hasRun(answer.runId)))
          if (answer._tag === "AwaitingApproval") {
            return yield* new SomethingWrong({ reason: "the effect was not undone yet: its undo awaits approval" })
          }
          if (answer.outcome !== "completed") {
            return yield* new SomethingWrong({ reason: `the effect was not undone: ${answer.outcome}` })
          }
        }),
        { access: "write", as: by }
      )
    )
).pipe(
  Command.withDescription(
    "Undo one applied effect (a step's idempotency key) with the undo of the tool --register loads, as a run of its own; asking again answers as the first time. Exits 1 unless the answer is completed."
  )
)
