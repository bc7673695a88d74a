/**
 * Who may start, resume, approve, reject, resolve and compensate which saga.
 *
 * The caller's identity is the `CurrentPrincipal` in its Effect context. The `Saga` service asks
 * the `Authority` in context (`Authority.allowAll` when there is none) before it reads the journal,
 * again before each step of a run progresses, and before each undo starts: a permission revoked
 * while a saga runs stops it before its next step.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import { dual } from "effect/Function"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"

/**
 * A caller's identity.
 *
 * @since 0.1.0
 * @category models
 */
export interface Principal {
  readonly id: string
}

/**
 * The principal of the code running: provide it where requests enter (an HTTP handler, the CLI).
 *
 * @since 0.1.0
 * @category context
 */
export class CurrentPrincipal extends Context.Tag("effect-saga/CurrentPrincipal")<CurrentPrincipal, Principal>() {}

/**
 * The principal of code that names none.
 *
 * @since 0.1.0
 * @category constructors
 */
export const anonymous: Principal = { id: "anonymous" }

/**
 * The schema of an `Action`: what `Unauthorized.action` decodes with.
 *
 * @since 0.5.0
 * @category schemas
 */
export const Action = Schema.Literal("start", "resume", "approve", "reject", "resolve", "compensate")

/**
 * What a principal may be asked permission for.
 *
 * @since 0.1.0
 * @category models
 */
export type Action = typeof Action.Type

/**
 * The type id the authority's errors carry: `isUnauthorized` checks it, never a `_tag` that a plain
 * value could share.
 *
 * @since 0.2.0
 * @category type ids
 */
export const ErrorTypeId: unique symbol = Symbol.for("effect-saga/Authority/Error")

/**
 * @since 0.2.0
 * @category type ids
 */
export type ErrorTypeId = typeof ErrorTypeId

/**
 * A principal was denied an action: nothing was journaled for it.
 *
 * @since 0.1.0
 * @category errors
 */
export class Unauthorized extends Schema.TaggedError<Unauthorized>("effect-saga/Unauthorized")("Unauthorized", {
  principal: Schema.String,
  action: Action,
  sagaId: Schema.String,
  stepId: Schema.NullOr(Schema.String)
}) {
  /** @since 0.2.0 */
  get [ErrorTypeId](): ErrorTypeId {
    return ErrorTypeId
  }
  override get message(): string {
    const step = this.stepId === null ? "" : ` (step ${this.stepId})`
    return `${this.principal} may not ${this.action} saga ${this.sagaId}${step}`
  }
}

/**
 * Whether a value is an `Unauthorized`, by its `ErrorTypeId`.
 *
 * @since 0.2.0
 * @category guards
 */
export const isUnauthorized = (u: unknown): u is Unauthorized => Predicate.hasProperty(u, ErrorTypeId)

/**
 * The authority service. A check answers `true` to allow; it cannot fail (an authority backed by a
 * store decides what its own failures mean).
 *
 * @since 0.1.0
 * @category services
 */
export class Authority extends Context.Tag("effect-saga/Authority")<
  Authority,
  {
    /** May `principal` start saga `sagaId`? */
    readonly canStart: (principal: Principal, sagaId: string) => Effect.Effect<boolean>
    /** May `principal` resume (run again) saga `sagaId`? Asked again before each step of a run. */
    readonly canResume: (principal: Principal, sagaId: string) => Effect.Effect<boolean>
    /** May `principal` approve (or renew the approval of) a step? */
    readonly canApprove: (principal: Principal, sagaId: string, stepId: string) => Effect.Effect<boolean>
    /** May `principal` reject a step? */
    readonly canReject: (principal: Principal, sagaId: string, stepId: string) => Effect.Effect<boolean>
    /** May `principal` settle a step whose outcome is unknown? */
    readonly canResolve: (principal: Principal, sagaId: string, stepId: string) => Effect.Effect<boolean>
    /** May `principal` undo a step (`stepId`), or ask for a saga's compensation (`undefined`)? */
    readonly canCompensate: (principal: Principal, sagaId: string, stepId: string | undefined) => Effect.Effect<boolean>
  }
>() {}

const allow = () => Effect.succeed(true)

/**
 * An authority that allows everything: the default when no `Authority` is in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const allowAll: Authority["Type"] = Authority.of({
  canStart: allow,
  canResume: allow,
  canApprove: allow,
  canReject: allow,
  canResolve: allow,
  canCompensate: allow
})

/**
 * `allowAll` as a layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerAllowAll: Layer.Layer<Authority> = Layer.succeed(Authority, allowAll)

/**
 * An authority from one decision over every action: `decide(principal, action, sagaId, stepId)`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Authority } from "effect-saga"
 *
 * const OnlyOncallApproves = Authority.layer((principal, action) =>
 *   Effect.succeed(action !== "approve" || principal.id.startsWith("oncall:"))
 * )
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  decide: (principal: Principal, action: Action, sagaId: string, stepId: string | undefined) => Effect.Effect<boolean>
): Authority["Type"] =>
  Authority.of({
    canStart: (principal, sagaId) => decide(principal, "start", sagaId, undefined),
    canResume: (principal, sagaId) => decide(principal, "resume", sagaId, undefined),
    canApprove: (principal, sagaId, stepId) => decide(principal, "approve", sagaId, stepId),
    canReject: (principal, sagaId, stepId) => decide(principal, "reject", sagaId, stepId),
    canResolve: (principal, sagaId, stepId) => decide(principal, "resolve", sagaId, stepId),
    canCompensate: (principal, sagaId, stepId) => decide(principal, "compensate", sagaId, stepId)
  })

/**
 * `make` as a layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  decide: (principal: Principal, action: Action, sagaId: string, stepId: string | undefined) => Effect.Effect<boolean>
): Layer.Layer<Authority> => Layer.succeed(Authority, make(decide))

/**
 * Runs `self` as `principal`.
 *
 * @since 0.1.0
 * @category context
 */
export const withPrincipal: {
  (principal: Principal): <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, Exclude<R, CurrentPrincipal>>
  <A, E, R>(self: Effect.Effect<A, E, R>, principal: Principal): Effect.Effect<A, E, Exclude<R, CurrentPrincipal>>
} = dual(
  2,
  <A, E, R>(self: Effect.Effect<A, E, R>, principal: Principal): Effect.Effect<A, E, Exclude<R, CurrentPrincipal>> =>
    Effect.provideService(self, CurrentPrincipal, principal)
)

/**
 * The principal of the code running, `anonymous` if none was provided.
 *
 * @since 0.1.0
 * @category context
 */
export const currentPrincipal: Effect.Effect<Principal> = Effect.map(
  Effect.serviceOption(CurrentPrincipal),
  Option.getOrElse(() => anonymous)
)

/**
 * Asks `authority` whether the current principal may take `action`; fails with `Unauthorized` if not.
 *
 * @since 0.1.0
 * @category checks
 */
export const check = (
  authority: Authority["Type"],
  action: Action,
  sagaId: string,
  stepId?: string
): Effect.Effect<Principal, Unauthorized> =>
  Effect.flatMap(currentPrincipal, (principal) =>
    Effect.flatMap(ask(authority, principal, action, sagaId, stepId), (allowed) =>
      // Only `true` allows: an answer that is not a boolean (the text "false" an untyped store read) denies.
      allowed === true
        ? Effect.succeed(principal)
        : Effect.fail(new Unauthorized({ principal: principal.id, action, sagaId, stepId: stepId ?? null }))
    )
  )

const ask = (
  authority: Authority["Type"],
  principal: Principal,
  action: Action,
  sagaId: string,
  stepId: string | undefined
): Effect.Effect<boolean> => {
  switch (action) {
    case "start":
      return authority.canStart(principal, sagaId)
    case "resume":
      return authority.canResume(principal, sagaId)
    case "approve":
      return authority.canApprove(principal, sagaId, stepId ?? "")
    case "reject":
      return authority.canReject(principal, sagaId, stepId ?? "")
    case "resolve":
      return authority.canResolve(principal, sagaId, stepId ?? "")
    case "compensate":
      return authority.canCompensate(principal, sagaId, stepId)
  }
}
