/**
 * `effect-saga list [--status S]… [--older-than D] [--limit N] [--offset N] [--json]`: the sagas in
 * the journal, least recently updated first, or one page of them.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as HelpDoc from "@effect/cli/HelpDoc"
import * as Options from "@effect/cli/Options"
import * as ValidationError from "@effect/cli/ValidationError"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { SagaRecord } from "../../../Journal.js"
import { SagaStatus } from "../../../Journal.js"
import * as Saga from "../../../Saga.js"
import * as Lease from "../../util/lease.js"
import { printable } from "../../util/printable.js"
import * as Stuck from "../../util/stuck.js"
import { table } from "../../util/table.js"
import { exitIfDirty, stuckLine } from "../dirty.js"
import * as LeaseClock from "../leaseClock.js"
import { print, printJson } from "../output.js"
import * as Parse from "../parse.js"
import { db, json, limit, offset, optionalList, pageLine, pageOf, withStore } from "../root.js"
import * as Trust from "../trust.js"

const STATUSES = SagaStatus.literals.join(", ")

/**
 * A status `--status` names, or why the text is none: `stuck` is a mark `list` adds to some
 * sagas, not a status, and says where those sagas are.
 */
const statusOf = (text: string) => {
  const known = SagaStatus.literals.find((literal) => literal === text)
  if (known !== undefined) return Effect.succeed(known)
  const message =
    text === "stuck"
      ? "--status stuck: stuck is no status but a mark list adds to a saga running, compensating or suspended that no worker drives and no Recovery can: --status running --status compensating --status suspended lists them, each stuck one marked"
      : `--status ${JSON.stringify(text)} is not a status: give one of ${STATUSES}`
  return Effect.fail(ValidationError.invalidValue(HelpDoc.p(message)))
}

const status = Options.text("status").pipe(
  Options.withPseudoName("STATUS"),
  Options.withDescription(`Only sagas with this status (${STATUSES}). Repeatable: any of them.`),
  Options.repeated,
  Options.mapEffect((texts) => Effect.forEach(texts, statusOf)),
  optionalList
)

const olderThan = Options.text("older-than").pipe(
  Options.withPseudoName("DURATION"),
  Options.withDescription("Only sagas not updated for this long: 90s, 30m, 2h, 7d."),
  Options.optional
)

/** The lease column: empty where a saga holds none and needs none (it is halted, or it ended). */
const leaseOf = (record: SagaRecord, now: number): string =>
  record.lease === null && !Lease.isUndriven(record, now) ? "" : Lease.describe(record, now)

/**
 * A saga row as `list` prints it, with its mark: `null`, or why its journal does not verify.
 *
 * @since 0.2.0
 * @category models
 */
export type Listed = SagaRecord & { readonly tampered: Trust.Tampered | null }

/** `Saga.list` has verified every saga it lists: its mark, as the CLI prints it (`null` when intact). */
const listed = ({ tampered, ...record }: Saga.SagaSummary): Listed => ({ ...record, tampered: tampered ?? null })

/**
 * The sagas among `rows` that are stuck (`Stuck.stuckAmong`: only a saga no worker drives is read,
 * for what it was started from); a tampered one is marked as such instead.
 */
const stuckOf = (rows: ReadonlyArray<Listed>, now: number) =>
  Stuck.stuckAmong(
    rows.filter((row) => row.tampered === null),
    now
  )

const render = (rows: ReadonlyArray<Listed>, now: number, stuck: ReadonlySet<string>): string =>
  rows.length === 0
    ? "no sagas"
    : [
        table(
          ["saga", "status", "chain", "revision", "updated", "lease"],
          rows.map((row) => [
            row.sagaId,
            row.status,
            Trust.cell(row.tampered),
            String(row.revision),
            row.updatedAt,
            leaseOf(row, now)
          ])
        ),
        ...rows.flatMap((row) => (row.tampered === null ? [] : [Trust.line(row.sagaId, row.tampered)])),
        ...rows.flatMap((row) => (stuck.has(row.sagaId) ? [printable(stuckLine(row.sagaId))] : []))
      ].join("\n")

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
export const list = Command.make("list", { db, json, status, olderThan, limit, offset }, (options) =>
  Effect.flatMap(updatedBefore(options.olderThan), (before) =>
    withStore(
      options.db,
      Effect.gen(function* () {
        const filter = { status: options.status.length === 0 ? undefined : options.status, updatedBefore: before }
        const page = pageOf(options)
        // A page: the store selects, orders and slices; only its sagas are read and verified.
        const listedPage =
          page === undefined ? undefined : yield* Saga.listPage({ ...filter, ...page, order: "updatedAt" })
        const records = listedPage === undefined ? yield* Saga.list(filter) : listedPage.sagas
        const rows = records.map(listed)
        // Leases by the store's clock: on PostgreSQL, its server's, as the workers' claims judge them.
        const now = yield* LeaseClock.now
        const stuck = yield* stuckOf(rows, now)
        const table = render(rows, now, stuck)
        yield* options.json
          ? printJson(rows.map((row) => ({ ...row, stuck: stuck.has(row.sagaId) })))
          : print(
              page === undefined || listedPage === undefined
                ? table
                : `${table}\n${pageLine("sagas", page, rows.length, listedPage.total)}`
            )
        yield* Trust.exitIfTampered(rows)
        yield* exitIfDirty(rows.map((row) => ({ ...row, stuck: stuck.has(row.sagaId) })))
      }),
      { access: "read" }
    )
  )
).pipe(
  Command.withDescription(
    "List the sagas, least recently updated first, each with its journal verified (chain: intact, or TAMPERED at the first entry that does not fit); with --limit/--offset, one page of them (only its sagas are read). Exits 1 if one listed is tampered, compensation_failed or needs_attention, or stuck (started with Saga.run, so that no Recovery can resume it, and running or compensating with no worker driving it, or suspended)."
  )
)
