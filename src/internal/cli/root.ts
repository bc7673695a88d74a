/**
 * The root command and what every command shares: `--db` (before or after the command's name, or
 * `EFFECT_SAGA_DB`), `--json`, `--as`, `--revision`/`--digest`, and running a command against the
 * store `--db` names.
 *
 * @since 0.1.0
 */
import * as fs from "node:fs"
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as HelpDoc from "@effect/cli/HelpDoc"
import * as Options from "@effect/cli/Options"
import * as ValidationError from "@effect/cli/ValidationError"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Authority from "../../Authority.js"
import * as Answered from "./answered.js"
import { decimalInteger } from "./decimal.js"
import { UsageError } from "./failure.js"
import * as Interruption from "./interruption.js"
import * as Store from "./store.js"

/**
 * A repeatable option shown as optional (`[--register MODULE...]`): none given is the empty list.
 *
 * @since 0.2.0
 * @category options
 */
export const optionalList = <A>(self: Options.Options<Array<A>>): Options.Options<ReadonlyArray<A>> =>
  self.pipe(Options.optional, Options.map(Option.getOrElse((): ReadonlyArray<A> => [])))

/**
 * `--db FILE`: the SQLite file that holds the journal and approvals, or a PostgreSQL URL.
 *
 * @since 0.1.0
 * @category options
 */
export const db = Options.text("db").pipe(
  Options.withPseudoName("FILE"),
  Options.withDescription(
    "The SQLite file of the journal and approvals, or a postgres:// URL (default: $EFFECT_SAGA_DB). It must hold an effect-saga journal: only import creates one."
  ),
  Options.optional
)

/**
 * The root command: `effect-saga [--db FILE] <command>`.
 *
 * @since 0.1.0
 * @category commands
 */
export const root = Command.make("effect-saga", { db })

/**
 * `--json`: print JSON for scripts instead of a table.
 *
 * @since 0.1.0
 * @category options
 */
export const json = Options.boolean("json").pipe(Options.withDescription("Print JSON for scripts."))

/**
 * `--as WHO`: who the operator is, as the journal records them.
 *
 * @since 0.1.0
 * @category options
 */
export const as = Options.text("as").pipe(
  Options.withPseudoName("WHO"),
  Options.withDescription("Who you are, as the journal records you.")
)

/**
 * `--revision N`: the saga's revision the operator saw (`show` prints it).
 *
 * @since 0.1.0
 * @category options
 */
export const revision = decimalInteger("revision").pipe(
  Options.withDescription(
    "The saga's revision you saw (show prints it): refused if the saga moved on since. Default: the revision read just before."
  ),
  // A negative number is no saga's position: a mistyped flag, not a saga that moved on.
  Options.mapEffect((n) =>
    n >= 0
      ? Effect.succeed(n)
      : Effect.fail(
          ValidationError.invalidValue(
            HelpDoc.p(`--revision ${n} is not a revision: give the one show printed (a whole number, 0 or more)`)
          )
        )
  ),
  Options.optional
)

/**
 * An option's text that must be a SHA-256 in hex (64 digits, 0-9 a-f): any other is refused before
 * the store is opened, with `refusal` of the text as given (quoted).
 *
 * @since 0.5.0
 * @category options
 */
export const sha256Only = (refusal: (quoted: string) => string) =>
  Options.mapEffect((text: string) =>
    /^[0-9a-f]{64}$/.test(text)
      ? Effect.succeed(text)
      : Effect.fail(ValidationError.invalidValue(HelpDoc.p(refusal(JSON.stringify(text)))))
  )

/**
 * `--digest H`: the saga's digest the operator saw.
 *
 * @since 0.1.0
 * @category options
 */
export const digest = Options.text("digest").pipe(
  Options.withPseudoName("HASH"),
  Options.withDescription("The saga's digest you saw (show prints it): refused if the saga moved on since."),
  // Text that is no SHA-256 in hex is no saga's position: a mistyped or cut hash, not a saga that moved on.
  sha256Only((text) => `--digest ${text} is not a digest: give the one show printed (64 hex digits, 0-9 a-f)`),
  Options.optional
)

/**
 * `--register MODULE`: modules whose tools this process may run the undos of.
 *
 * @since 0.1.0
 * @category options
 */
export const register = Options.text("register").pipe(
  Options.withPseudoName("MODULE"),
  Options.withDescription(
    "A JavaScript module exporting the saga's tools (Compensable tools, toolkits, agents made with Agent.make, arrays or records of them, and optionally a `layer` for their services): their undos run in this process. Repeatable."
  ),
  Options.repeated,
  optionalList
)

/**
 * `SAGA`: a saga's id.
 *
 * @since 0.1.0
 * @category arguments
 */
export const saga = Args.text({ name: "SAGA" }).pipe(Args.withDescription("The saga's id."))

/**
 * `STEP`: a step's id, or the start of it if that names one step (`show` lists them).
 *
 * @since 0.1.0
 * @category arguments
 */
export const step = Args.text({ name: "STEP" }).pipe(
  Args.withDescription("The step's id (show lists them), or the start of it if that names one step of the saga.")
)

const dbFromEnvironment = Effect.orElseSucceed(Config.option(Config.nonEmptyString("EFFECT_SAGA_DB")), () =>
  Option.none<string>()
)

/** The database the command line names: the command's `--db`, the root's, or `EFFECT_SAGA_DB`. */
const storeOf = (own: Option.Option<string>) =>
  Effect.gen(function* () {
    const { db: rootDb } = yield* root
    const named = Option.orElse(own, () => rootDb)
    const chosen = Option.isSome(named) ? named : yield* dbFromEnvironment
    if (Option.isNone(chosen)) {
      return yield* new UsageError({ message: "no database: pass --db FILE or set EFFECT_SAGA_DB" })
    }
    return yield* Store.parse(chosen.value)
  })

/**
 * How a command runs against the store: to read it, to change it, or to create it (only `import`;
 * see `Store.Access`), and who the operator is (`--as`), as the `CurrentPrincipal` the saga
 * service's `Authority` sees.
 *
 * @since 0.1.0
 * @category running
 */
export interface RunOptions {
  readonly access: Store.Access
  readonly as?: string | undefined
  /**
   * What the command says if it is interrupted, where it knows better than what the operator's
   * commands it ran journaled (`serve`, `prune`); by default, that (see `Interruption`).
   */
  readonly interrupted?: string | undefined
}

/**
 * Runs a command's body against the store the command line names (see `Store.layer`), with the
 * access `options.access` names, as the operator `options.as` names; the services are closed when
 * it ends.
 *
 * NOTE: what the body opens in its scope (`serve`'s HTTP server, the `layer` of a `--register`
 * module) is closed before the store: a server stopped by SIGTERM answers the requests in flight,
 * and journals what their undos did, before the store closes under them. Interrupted, the command
 * says what it wrote (`Interruption`): nothing for a read, what a changing one journaled.
 *
 * @since 0.1.0
 * @category running
 */
export const withStore = <A, E>(
  own: Option.Option<string>,
  body: Effect.Effect<A, E, Store.Services | Scope.Scope>,
  options: RunOptions
) => {
  const accounted = options.access === "write" && options.interrupted === undefined
  const opened = (store: Store.Store) =>
    Effect.zipRight(
      Interruption.opening(options.access, options.interrupted),
      Effect.provide(
        Effect.scoped(Answered.answering(accounted ? Interruption.accounting(body) : body)),
        Store.layer(store, options.access)
      )
    )
  const asOperator = (store: Store.Store) =>
    options.as === undefined ? opened(store) : Authority.withPrincipal(opened(store), { id: options.as })
  return Effect.flatMap(storeOf(own), (store) => {
    // A file a command creates (import) is removed again if the command fails: all or nothing.
    const creates = options.access === "create" && store._tag === "Sqlite" && !fs.existsSync(store.filename)
    return creates ? Effect.tapErrorCause(asOperator(store), () => Store.remove(store)) : asOperator(store)
  })
}

/** A whole-number option at least `least`, named and explained when it is not one. */
const wholeNumber = (name: string, least: number, what: string) =>
  decimalInteger(name).pipe(
    Options.withDescription(what),
    Options.mapEffect((n) =>
      n >= least
        ? Effect.succeed(n)
        : Effect.fail(ValidationError.invalidValue(HelpDoc.p(`--${name} ${n}: give a whole number, ${least} or more`)))
    ),
    Options.optional
  )

/**
 * `--limit N`: list at most N (1 or more); without it, every one.
 *
 * @since 0.5.0
 * @category options
 */
export const limit = wholeNumber("limit", 1, "List at most N (1 or more): one page. Default: every one.")

/**
 * `--offset N`: skip the first N (0 or more), for the next page.
 *
 * @since 0.5.0
 * @category options
 */
export const offset = wholeNumber("offset", 0, "Skip the first N (0 or more): the page after them. Default: 0.")

/**
 * The page `--limit` and `--offset` ask for; `undefined` when neither is given (every one).
 *
 * @since 0.5.0
 * @category options
 */
export const pageOf = (options: {
  readonly limit: Option.Option<number>
  readonly offset: Option.Option<number>
}): { readonly offset: number; readonly limit: number } | undefined =>
  Option.isNone(options.limit) && Option.isNone(options.offset)
    ? undefined
    : {
        offset: Option.getOrElse(options.offset, () => 0),
        limit: Option.getOrElse(options.limit, () => Number.MAX_SAFE_INTEGER)
      }

/**
 * The line under a page of `what`: which of how many it shows, and how to ask for the next.
 *
 * @since 0.5.0
 * @category options
 */
export const pageLine = (
  what: string,
  page: { readonly offset: number; readonly limit: number },
  shown: number,
  total: number
): string => {
  const range =
    shown === 0 ? `none of ${total} ${what}` : `${what} ${page.offset + 1}–${page.offset + shown} of ${total}`
  const next = page.offset + page.limit < total ? `; the next: --offset ${page.offset + page.limit}` : ""
  return `${range}${next}`
}
