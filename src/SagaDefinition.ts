/**
 * A saga program with a name and a typed input. A saga started from a definition records both in
 * its journal, so that `Recovery` can rebuild the program in another process after a crash.
 *
 * @since 0.1.0
 */
import type * as Effect from "effect/Effect"
import type * as Schema from "effect/Schema"
import type { CurrentSaga } from "./internal/engine/context.js"

/**
 * A named saga program over a typed input.
 *
 * @since 0.1.0
 * @category models
 */
export interface SagaDefinition<I, A, E, R> {
  /** Unique among the definitions a worker recovers; journaled when a saga starts. */
  readonly name: string
  /** How the input is journaled (it must encode to JSON) and decoded again on recovery. */
  readonly input: Schema.Schema<I, any>
  /** The program, given the decoded input and the saga's id. */
  readonly program: (input: I, sagaId: string) => Effect.Effect<A, E, R>
}

/**
 * Any definition, whatever its types.
 *
 * @since 0.1.0
 * @category models
 */
export type Any = SagaDefinition<any, any, any, any>

/**
 * The services a definition's program needs, besides the saga it runs in.
 *
 * @since 0.1.0
 * @category models
 */
export type Context<D> = D extends SagaDefinition<any, any, any, infer R> ? Exclude<R, CurrentSaga> : never

/**
 * Defines a saga program with a name and an input schema.
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { SagaDefinition } from "effect-saga"
 *
 * const Checkout = SagaDefinition.make("checkout", {
 *   input: Schema.Struct({ orderId: Schema.String, amount: Schema.Number }),
 *   program: ({ amount, orderId }) => Effect.succeed(`${orderId}: ${amount}`)
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <I, A, E, R>(
  name: string,
  options: {
    readonly input: Schema.Schema<I, any>
    readonly program: (input: I, sagaId: string) => Effect.Effect<A, E, R>
  }
): SagaDefinition<I, A, E, R> => ({ name, input: options.input, program: options.program })
