/**
 * Type tests, checked by `tsc` (`npm run typecheck`): `Cli.command` embedded in a CLI of one's own
 * needs nothing but what the app provides and fails with `Cli.CommandError`, so the app runs
 * without a cast.
 */
import * as Command from "@effect/cli/Command"
import type * as ValidationError from "@effect/cli/ValidationError"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Context, Effect, Layer } from "effect"
import * as Cli from "../../src/Cli.js"

type Equals<X, Y> = (<T>() => T extends X ? 1 : 2) extends <T>() => T extends Y ? 1 : 2 ? true : false
const assert = <T extends true>(..._: [] | [T]) => undefined

class Db extends Context.Tag("app/Db")<Db, { readonly count: Effect.Effect<number> }>() {}
const DbLive = Layer.succeed(Db, { count: Effect.succeed(1) })

const mine = Command.make("mine", {}, () => Effect.flatMap(Db, (db) => db.count))
const app = Command.make("app").pipe(Command.withSubcommands([mine, Cli.command]))
const program = Command.run(app, { name: "app", version: "1.0.0" })(process.argv).pipe(
  Effect.provide(DbLive),
  Effect.provide(NodeContext.layer)
)

assert<Equals<Effect.Effect.Context<typeof program>, never>>()
assert<Equals<Effect.Effect.Error<typeof program>, Cli.CommandError | ValidationError.ValidationError>>()
export const runs = () => NodeRuntime.runMain(program)
