/**
 * `effect-saga verify SAGA | --all [--json]`: re-computes hash chains.
 *
 * @since 0.1.0
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Journal from "../../../Journal.js"
import * as Saga from "../../../Saga.js"
import { table } from "../../util/table.js"
import { SomethingWrong, UsageError } from "../failure.js"
import { print, printJson } from "../output.js"
import { db, json, withStore } from "../root.js"
import * as Trust from "../trust.js"

const saga = Args.text({ name: "SAGA" }).pipe(Args.withDescription("The saga to verify."), Args.optional)

const all = Options.boolean("all").pipe(
  Options.withDescription("Verify every saga in the journal: every saga row, and every saga with entries and no row.")
)

/**
 * One saga's verdict: its chain is intact (entries, the digest it ends with) or broken at `seq`.
 *
 * @since 0.1.0
 * @category models
 */
export type Verdict = { readonly sagaId: string } & Journal.Verification

const verdictOf = (inspection: Trust.Inspection): Verdict => ({ sagaId: inspection.sagaId, ...inspection.verification })

/** Whether the store holds nothing of the saga: never written, or pruned since it was listed. */
const holdsNothing = (inspection: Trust.Inspection): boolean =>
  inspection.record === undefined && inspection.entries.length === 0 && inspection.verification._tag === "Intact"

/** How many sagas `verify --all` lists and verifies at a time: only their journals are held at once. */
const PAGE = 200

/**
 * Every saga's verdict: the listed sagas' in `Saga.list`'s order (least recently updated first), a
 * page of sagas at a time, then those of the sagas with entries and no row, which no list names
 * (`Journal.sagasWithoutRow`: a row deleted, a break at seq 1). Each journal is read, verified and
 * let go, and only the verdicts are kept. A saga that moves between pages while they are read
 * (written meanwhile) is given once; one pruned since it was listed, of which nothing is left to
 * verify, is passed over (never an intact chain of no entries).
 *
 * @since 0.5.0
 * @category commands
 */
export const everyVerdict = Effect.gen(function* () {
  const verdicts: Array<Verdict> = []
  const seen = new Set<string>()
  const verdictOnce = (sagaId: string) =>
    Effect.gen(function* () {
      if (seen.has(sagaId)) return
      seen.add(sagaId)
      const inspection = yield* Trust.inspect(sagaId)
      if (!holdsNothing(inspection)) verdicts.push(verdictOf(inspection))
    })
  for (let offset = 0; ; offset += PAGE) {
    const page = yield* Saga.listPage({ order: "updatedAt", offset, limit: PAGE })
    for (const summary of page.sagas) yield* verdictOnce(summary.sagaId)
    if (offset + PAGE >= page.total) break
  }
  for (const sagaId of yield* Journal.sagasWithoutRow) yield* verdictOnce(sagaId)
  return verdicts
})

/**
 * The verdicts to print: the named saga's (found by its row or by its entries: a saga whose row was
 * deleted or does not decode is a broken chain, not an unknown saga), or every saga's.
 */
const verdictsOf = (options: { readonly saga: Option.Option<string>; readonly all: boolean }) =>
  Effect.gen(function* () {
    const named = options.saga
    if (Option.isNone(named)) return yield* everyVerdict
    const inspection = yield* Trust.inspect(named.value)
    if (holdsNothing(inspection)) return yield* new Journal.SagaNotFound({ sagaId: named.value })
    return [verdictOf(inspection)]
  })

const render = (verdicts: ReadonlyArray<Verdict>): string =>
  verdicts.length === 0
    ? "no sagas"
    : table(
        ["saga", "chain", "detail"],
        verdicts.map((verdict) =>
          verdict._tag === "Intact"
            ? [verdict.sagaId, "intact", `${verdict.entries} entries, digest ${verdict.digest}`]
            : [verdict.sagaId, "BROKEN", `at seq ${verdict.seq}: ${verdict.reason}`]
        )
      )

/**
 * The `verify` command.
 *
 * @since 0.1.0
 * @category commands
 */
export const verify = Command.make("verify", { db, all, json, saga }, (options) =>
  Effect.gen(function* () {
    if (Option.isSome(options.saga) === options.all) {
      return yield* new UsageError({ message: "name a saga or pass --all (not both)" })
    }
    yield* withStore(
      options.db,
      Effect.gen(function* () {
        const verdicts = yield* verdictsOf(options)
        yield* options.json ? printJson(verdicts) : print(render(verdicts))
        const broken = verdicts.filter((verdict) => verdict._tag === "Broken")
        if (broken.length > 0) {
          return yield* new SomethingWrong({
            reason: broken.map((verdict) => `saga ${verdict.sagaId} is broken at seq ${verdict.seq}`).join(", ")
          })
        }
      }),
      { access: "read" }
    )
  })
).pipe(
  Command.withDescription(
    "Re-compute the hash chain of a saga (or of every saga with --all), and check it ends where the saga's row says. Exits 1 if one is broken, naming the first entry that does not fit."
  )
)
