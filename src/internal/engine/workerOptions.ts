/** The options of a worker (`Saga.layerWith`), checked before the layer reads or writes anything. */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type { WorkerOptions } from "../../Saga.js"
import { InvalidWorkerOptions } from "../../SagaError.js"
import { identifierProblem, MAX_STEP_KEY_BYTES, preview } from "../util/identifier.js"
import { APPROVAL_TTL_ZERO, durationOf, givenDuration, positiveDurationOf, unknownOption } from "../util/options.js"
import { typeName } from "../util/printable.js"

/** A worker's options as the engine uses them. */
export interface Checked {
  readonly owner: string
  readonly leaseTtl: Duration.Duration
  readonly approvalTtl: Duration.Duration | undefined
}

const refuse = (option: InvalidWorkerOptions["option"], reason: string) => new InvalidWorkerOptions({ option, reason })

/** The longest lease a worker takes: a saga whose worker died waits that long to be recovered. */
const MAX_LEASE_TTL = Duration.days(365)

/** Why `ttl` (given as `input`) cannot be a lease's length, if it cannot: under 1 ms, or over 365 days. */
const leaseProblem = (ttl: Duration.Duration, input: Duration.DurationInput): string | undefined => {
  if (!Duration.isFinite(ttl) || Duration.toMillis(ttl) <= 0)
    return `${givenDuration(input)} is not a positive, finite duration`
  // A lease's expiry is kept in whole milliseconds: a shorter one would lapse as it was taken.
  if (Duration.toMillis(ttl) < 1)
    return `${givenDuration(input)} is under 1 millisecond, and a lease expires in whole milliseconds: it would be a lease of zero`
  return Duration.lessThanOrEqualTo(ttl, MAX_LEASE_TTL)
    ? undefined
    : `${givenDuration(input)} is longer than 365 days: a saga whose worker died would wait that long to be recovered`
}

const leaseTtlOf = (input: Duration.DurationInput): Either.Either<Duration.Duration, InvalidWorkerOptions> =>
  Either.mapLeft(
    Either.flatMap(durationOf(input), (ttl) => {
      const problem = leaseProblem(ttl, input)
      return problem === undefined ? Either.right(ttl) : Either.left(problem)
    }),
    (reason) => refuse("leaseTtl", reason)
  )

const approvalTtlOf = (input: Duration.DurationInput): Either.Either<Duration.Duration, InvalidWorkerOptions> =>
  Either.mapLeft(positiveDurationOf(input, APPROVAL_TTL_ZERO), (reason) => refuse("approvalTtl", reason))

/** The options `Saga.layerWith` knows. */
const KNOWN: ReadonlyArray<string> = ["owner", "leaseTtl", "approvalTtl"]

/** The worker's options, or `InvalidWorkerOptions` for the first it cannot work with. */
export const checked = (
  options: WorkerOptions,
  defaultOwner: () => string
): Effect.Effect<Checked, InvalidWorkerOptions> =>
  Effect.suspend(() => {
    // From JavaScript anything may come: no options (null) take the defaults, a misspelled one is refused.
    if (options === null || options === undefined) return checked({}, defaultOwner)
    if (typeof options !== "object") {
      return Effect.fail(refuse("options", `are ${typeName(options)}, not an object of ${KNOWN.join(", ")}`))
    }
    const unknown = unknownOption(options, KNOWN)
    if (unknown !== undefined) return Effect.fail(refuse("options", unknown))
    const owner = options.owner ?? defaultOwner()
    const badOwner = identifierProblem(owner, MAX_STEP_KEY_BYTES)
    if (badOwner !== undefined) return Effect.fail(refuse("owner", `${preview(owner)}: ${badOwner}`))
    return Effect.all({
      owner: Effect.succeed(owner),
      leaseTtl: leaseTtlOf(options.leaseTtl ?? "30 seconds"),
      approvalTtl: options.approvalTtl === undefined ? Effect.succeed(undefined) : approvalTtlOf(options.approvalTtl)
    })
  })
