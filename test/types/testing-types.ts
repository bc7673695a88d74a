/**
 * Type tests, checked by `tsc` (`npm run typecheck`): the fault-injection types `Testing` exports
 * say what they hold: `FaultSite` is what a plan's `on` takes, and `Faults.around` fails as the
 * call does or with the outcome a fault stands for, never `unknown`.
 */
import { Data, Effect } from "effect"
import type { Outcome } from "../../src/index.js"
import * as Testing from "../../src/Testing.js"

type Equals<X, Y> = (<T>() => T extends X ? 1 : 2) extends <T>() => T extends Y ? 1 : 2 ? true : false
const assert = <T extends true>(..._: [] | [T]) => undefined

class Declined extends Data.TaggedError("Declined")<{}> {}

assert<Equals<Testing.FaultSite, "execute" | "compensate">>()
assert<Equals<NonNullable<Testing.FaultPlan["on"]>, Testing.FaultSite>>()

declare const step: Testing.FaultStep
const around = Effect.flatMap(Testing.Faults, (faults) =>
  faults.around("charge", "execute", Effect.fail(new Declined()), step)
)
assert<Equals<Effect.Effect.Error<typeof around>, Declined | Outcome.Failed | Outcome.Unknown>>()
