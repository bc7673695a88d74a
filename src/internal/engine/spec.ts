import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Schedule from "effect/Schedule"
import type * as Schema from "effect/Schema"
import type { CompensationContext, RetryMode, Reversibility, StepContext } from "../../Compensable.js"

/**
 * The erased description of a step that the saga runtime executes: a tool's `spec`. Read it (its
 * `name`, `reversibility`, schemas); it is built by `Compensable.make`, not by hand.
 *
 * @since 0.5.0
 * @category models
 */
export interface StepSpec {
  readonly name: string
  readonly input: Schema.Schema<any, any>
  readonly success: Schema.Schema<any, any>
  readonly failure: Schema.Schema<any, any> | undefined
  readonly reversibility: Reversibility
  /** The forward call. */
  readonly execute: (input: any, step: StepContext) => Effect.Effect<any, any, any>
  /** The undo, if the tool declares one. */
  readonly compensate: ((ctx: CompensationContext<any, any>) => Effect.Effect<unknown, any, any>) | undefined
  readonly timeout: Duration.Duration | undefined
  readonly retry: Schedule.Schedule<any, any, any> | undefined
  readonly maxPayloadBytes: number
  readonly retryMode: RetryMode
  /** The undo cannot run without the receipt the forward call set. */
  readonly receiptRequired: boolean
  /** An explicit undo (`compensateEffect`) waits for an approval of its own. */
  readonly approveExplicitUndo: boolean
  /** The step changes nothing outside: compensation passes over it (journaled in `INTENT` and `EXECUTED`). */
  readonly changesNothing?: boolean | undefined
  /** How long an approval of this tool's step lasts when it names no expiry (irreversible tools). */
  readonly approvalTtl: Duration.Duration | undefined
  /**
   * Why an option of the declaration cannot work (a `timeout` or `approvalTtl` that is not a
   * positive duration), found when the tool was made: `problemOf` reports it as the declaration's.
   */
  readonly optionProblem?: string | undefined
  /**
   * `false`: a failure of this step is the program's to handle (an agent fed it to its model and
   * went on). It is journaled `FAILED` with `taints: false` and does not make the saga compensate
   * when the program ends. Absent: `true`.
   */
  readonly taintsOnFailure?: boolean | undefined
  /**
   * What the call was allowed besides its input (a manifest binding's grants: `network`,
   * `env:NAME`), journaled with its `INTENT` before it runs. Absent: nothing is journaled for it.
   */
  readonly capabilities?: ReadonlyArray<string> | undefined
  /**
   * What the undo is allowed besides what it is given (a manifest inverse binding's grants),
   * journaled with its `COMPENSATING` before it runs. Absent: nothing is journaled for it.
   */
  readonly undoCapabilities?: ReadonlyArray<string> | undefined
  /**
   * How a failure of this step reads in its span's status, when not as Effect's tracer shows it
   * (a model turn's error may quote the model's answer). Absent, or `undefined` for an error: as
   * Effect's tracer shows it.
   */
  readonly shownInSpan?: ((error: unknown) => string | undefined) | undefined
  /**
   * How a failure of this step is described in its journaled `FAILED`, when not as its message
   * (a model turn's tool call that does not decode: the schema's first issue, not the whole union
   * of parts `@effect/ai` lists first). Absent, or `undefined` for an error: as its message.
   */
  readonly describedAs?: ((error: unknown) => string | undefined) | undefined
  /**
   * Why the program cannot follow this step's journaled result, if it cannot. Asked on replay, once
   * the result decodes with `success`: a reason fails the run with `NonDeterminism` (nothing is
   * written or undone). A model turn's: its answer no longer decodes with the toolkit's schemas.
   */
  readonly unfollowable?: ((result: unknown) => string | undefined) | undefined
  /**
   * What declared this step's tool, when a layer builds it anew from one declaration (an agent's
   * handlers, `toLayer`, built once a run): two specs of one name and one declaration are one tool
   * to the registry, not two tools sharing a name.
   */
  readonly declaredBy?: object | undefined
}

/** One MiB: the default cap for a step's encoded input and result. */
export const DEFAULT_MAX_PAYLOAD_BYTES = 1024 * 1024
