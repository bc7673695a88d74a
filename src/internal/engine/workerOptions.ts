/** The options of a worker (`Saga.layerWith`), checked before the layer reads or writes anything. */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type { WorkerOptions } from "../../Saga.js"
import { InvalidWorkerOptions } from "../../SagaError.js"
import { identifierProblem, MAX_STEP_KEY_BYTES, preview } from "../util/identifier.js"

/** A worker's options as the engine uses them. */
export interface Checked {
  readonly owner: string
  readonly leaseTtl: Duration.Duration
  readonly approvalTtl: Duration.Duration | undefined
}

const refuse = (option: InvalidWorkerOptions["option"], reason: string) => new InvalidWorkerOptions({ option, reason })

/** The duration `input` names, or why it names none. */
const durationOf = (input: Duration.DurationInput): Either.Either<Duration.Duration, string> => {
  try {
    return Either.right(Duration.decode(input))
  } catch {
    return Either.left(`${preview(String(input))} is not a duration`)
  }
}

/**
 * A duration as it was given: `Duration.decode` clamps a negative or `NaN` one to zero, and a reason
 * that said `0` of `-5` would show a value nobody wrote.
 */
const given = (input: Duration.DurationInput): string => {
  if (typeof input === "string") return preview(input)
  if (typeof input === "number") return String(input)
  if (typeof input === "bigint") return `${input}n`
  if (Array.isArray(input)) return `[${input.join(", ")}]`
  return Duration.isDuration(input) ? Duration.format(input) : preview(String(input))
}

/** The longest lease a worker takes: a saga whose worker died waits that long to be recovered. */
const MAX_LEASE_TTL = Duration.days(365)

const leaseTtlOf = (input: Duration.DurationInput): Either.Either<Duration.Duration, InvalidWorkerOptions> =>
  Either.mapLeft(
    Either.flatMap(
      Either.filterOrLeft(
        durationOf(input),
        (ttl) => Duration.isFinite(ttl) && Duration.toMillis(ttl) > 0,
        () => `${given(input)} is not a positive, finite duration`
      ),
      (ttl) =>
        Duration.lessThanOrEqualTo(ttl, MAX_LEASE_TTL)
          ? Either.right(ttl)
          : Either.left(
              `${given(input)} is longer than 365 days: a saga whose worker died would wait that long to be recovered`
            )
    ),
    (reason) => refuse("leaseTtl", reason)
  )

const approvalTtlOf = (input: Duration.DurationInput): Either.Either<Duration.Duration, InvalidWorkerOptions> =>
  Either.mapLeft(
    Either.filterOrLeft(
      durationOf(input),
      (ttl) => Duration.toMillis(ttl) > 0,
      () => `${given(input)} is not a positive duration: every approval would have expired`
    ),
    (reason) => refuse("approvalTtl", reason)
  )

/** The worker's options, or `InvalidWorkerOptions` for the first it cannot work with. */
export const checked = (
  options: WorkerOptions,
  defaultOwner: () => string
): Effect.Effect<Checked, InvalidWorkerOptions> =>
  Effect.suspend(() => {
    const owner = options.owner ?? defaultOwner()
    const badOwner = identifierProblem(owner, MAX_STEP_KEY_BYTES)
    if (badOwner !== undefined) return Effect.fail(refuse("owner", `${preview(owner)}: ${badOwner}`))
    return Effect.all({
      owner: Effect.succeed(owner),
      leaseTtl: leaseTtlOf(options.leaseTtl ?? "30 seconds"),
      approvalTtl: options.approvalTtl === undefined ? Effect.succeed(undefined) : approvalTtlOf(options.approvalTtl)
    })
  })
