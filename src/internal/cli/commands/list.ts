/**
 * `effect-saga list [--status S]… [--older-than D] [--json]`: the sagas in the journal, least
 * recently updated first.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { SagaRecord } from "../../../Journal.js"
import { SagaStatus } from "../../../Journal.js"
import * as Saga from "../../../Saga.js"
import { table } from "../../table.js"
import { exitIfDirty } from "../dirty.js"
import { print, printJson } from "../output.js"
import * as Parse from "../parse.js"
import { db, json, withStore } from "../root.js"

const status = Options.choice("status", SagaStatus.literals).pipe(
  Options.withPseudoName("STATUS"),
  Options.withDescription("Only sagas with this status. Repeatable."),
  Options.repeated
)

const olderThan = Options.text("older-than").pipe(
  Options.withPseudoName("DURATION"),
  Options.withDescription("Only sagas not updated for this long: 90s, 30m, 2h, 7d."),
  Options.optional
)

const leaseOf = (record: SagaRecord): string =>
  record.lease === null ? "" : `${record.lease.owner} until ${record.lease.expiresAt}`

const render = (records: ReadonlyArray<SagaRecord>): string =>
  records.length === 0
    ? "no sagas"
    : table(
        ["saga", "status", "revision", "updated", "lease"],
        records.map((record) => [
          record.sagaId,
          record.status,
          String(record.revision),
          record.updatedAt,
          leaseOf(record)
        ])
      )

/** The time `--older-than` points at: now minus the duration. */
const updatedBefore = (text: Option.Option<string>) =>
  Option.match(text, {
    onNone: () => Effect.succeed(undefined),
    onSome: (given) =>
      Effect.zipWith(Parse.duration("--older-than", given), Clock.currentTimeMillis, (age, now) =>
        new Date(now - Duration.toMillis(age)).toISOString()
      )
  })

/**
 * The `list` command.
 *
 * @since 0.1.0
 * @category commands
 */
export const list = Command.make("list", { db, json, status, olderThan }, (options) =>
  Effect.flatMap(updatedBefore(options.olderThan), (before) =>
    withStore(
      options.db,
      Effect.gen(function* () {
        const records = yield* Saga.list({
          status: options.status.length === 0 ? undefined : options.status,
          updatedBefore: before
        })
        yield* options.json ? printJson(records) : print(render(records))
        yield* exitIfDirty(records)
      }),
      { access: "read" }
    )
  )
).pipe(
  Command.withDescription(
    "List the sagas, least recently updated first. Exits 1 if one listed is compensation_failed or needs_attention."
  )
)
