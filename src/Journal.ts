/**
 * The journal: an append-only, hash-chained record of every step of every saga.
 *
 * Every append names the `revision` (last seq) and `digest` (last hash) it expects and fails with
 * `ConcurrencyConflict` otherwise, so two writers can never fork a saga's history.
 *
 * NOTE (file length): the public home of the journal's model (phases, entries, rows, the service,
 * its errors, verification and NDJSON); most of its lines are the JSDoc of those exports, and the
 * implementation lives in `internal/journal/`.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import {
  type ConcurrencyConflict,
  ErrorTypeId,
  JournalCorrupted,
  type JournalError,
  JournalTampered,
  type LeaseHeld,
  SagaNotFound
} from "./internal/journal/errors.js"
import { type ExportEnd, endFieldUnkept, endLineOf, endOf, endProblem } from "./internal/journal/exportEnd.js"
import * as hash from "./internal/journal/hash.js"
import { refusedImport } from "./internal/journal/importable.js"
import type { Inspected } from "./internal/journal/inspect.js"
import * as inspected from "./internal/journal/inspect.js"
import { makeMemoryJournal } from "./internal/journal/memory.js"
import * as payloads from "./internal/journal/payloads.js"
import * as Signing from "./internal/journal/signing.js"
import * as status from "./internal/journal/status.js"
import { readStored, type StoredEntry } from "./internal/journal/storedEntries.js"
import { listRowless } from "./internal/journal/storedRows.js"
import { describeUndecodable } from "./internal/journal/undecodable.js"
import type { Verification } from "./internal/journal/verification.js"
import * as verification from "./internal/journal/verification.js"
import * as identifier from "./internal/util/identifier.js"
import { typeName } from "./internal/util/printable.js"
import type { KeyError, KeyRing } from "./Keys.js"
import { journalKeys } from "./Keys.js"
import type { InvalidIdentifier } from "./SagaError.js"

/**
 * The phases an entry can record: a step's own, and the saga's (prefixed `SAGA_`).
 *
 * @since 0.1.0
 * @category models
 */
export const Phase = Schema.Literal(
  "INTENT",
  "EXECUTED",
  "FAILED",
  "AWAITING_APPROVAL",
  "APPROVED",
  "REJECTED",
  "EXPIRED",
  "COMPENSATING",
  "COMPENSATED",
  "COMPENSATION_PARTIAL",
  "COMPENSATION_FAILED",
  "COMPENSATION_UNKNOWN",
  "SKIPPED",
  "SAGA_STARTED",
  "SAGA_RESUMED",
  "SAGA_COMPLETED",
  "SAGA_COMPENSATING",
  "SAGA_COMPENSATED",
  "SAGA_COMPENSATION_FAILED",
  "SAGA_AWAITING_APPROVAL",
  "SAGA_NEEDS_ATTENTION",
  "SAGA_SUSPENDED"
)

/**
 * @since 0.1.0
 * @category models
 */
export type Phase = typeof Phase.Type

/**
 * Where a saga stands, as its last saga-level entry says.
 *
 * @since 0.1.0
 * @category models
 */
export const SagaStatus = Schema.Literal(
  "running",
  "awaiting_approval",
  "needs_attention",
  "suspended",
  "compensating",
  "completed",
  "compensated",
  "compensation_failed"
)

/**
 * @since 0.1.0
 * @category models
 */
export type SagaStatus = typeof SagaStatus.Type

/**
 * One journal entry. `input` and `payload` are JSON text; `at` is an ISO-8601 UTC time; `hash` is
 * SHA-256 over the previous entry's hash and this entry's length-prefixed fields.
 *
 * @since 0.1.0
 * @category models
 */
export const Entry = Schema.Struct({
  sagaId: Schema.String,
  seq: Schema.Int.pipe(Schema.positive()),
  stepId: Schema.NullOr(Schema.String),
  toolName: Schema.NullOr(Schema.String),
  phase: Phase,
  input: Schema.NullOr(Schema.String),
  payload: Schema.NullOr(Schema.String),
  at: Schema.String,
  hash: Schema.String,
  /**
   * `<key id>:<HMAC-SHA-256>` of `hash` under the journal key, when one is configured: whoever
   * can write the store but does not hold the key cannot forge an entry that verifies.
   */
  mac: Schema.optional(Schema.String)
})

/**
 * @since 0.1.0
 * @category models
 */
export type Entry = typeof Entry.Type

/**
 * What a writer supplies for an entry; the journal assigns `seq`, `at` and `hash`.
 *
 * @since 0.1.0
 * @category models
 */
export type Draft = Omit<Entry, "sagaId" | "seq" | "at" | "hash" | "mac">

/**
 * Who is driving a saga, and until when (ISO-8601 UTC) unless they renew: a worker holds the lease
 * of every saga it runs, and no other worker may write to that saga before the lease lapses.
 *
 * @since 0.1.0
 * @category models
 */
export const Lease = Schema.Struct({
  owner: Schema.String,
  expiresAt: Schema.String
})

/**
 * @since 0.1.0
 * @category models
 */
export type Lease = typeof Lease.Type

/**
 * A saga's row: its status, `revision` (= last seq), `digest` (= last hash), and the lease of the
 * worker driving it (`null` when none is): an append under a holder takes or keeps it unless it
 * sets a status other than running or compensating (the append that halts or ends the saga drops
 * it), and `claim` takes it whatever the status (an operator's command on a finished saga).
 *
 * @since 0.1.0
 * @category models
 */
export const SagaRecord = Schema.Struct({
  sagaId: Schema.String,
  status: SagaStatus,
  revision: Schema.Int,
  digest: Schema.String,
  createdAt: Schema.String,
  updatedAt: Schema.String,
  lease: Schema.NullOr(Lease)
})

/**
 * @since 0.1.0
 * @category models
 */
export type SagaRecord = typeof SagaRecord.Type

/**
 * The revision and digest a writer last saw. A saga that does not exist yet is at `Expected.empty`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Expected {
  readonly revision: number
  readonly digest: string
}

/**
 * The position of a saga that has no entries yet.
 *
 * @since 0.1.0
 * @category constructors
 */
export const empty: Expected = { revision: 0, digest: hash.GENESIS }

/**
 * What a writer that drives a saga claims: its name (unique among the workers alive at one time)
 * and how long its lease lasts after each write or renewal.
 *
 * @since 0.1.0
 * @category models
 */
export interface Holder {
  readonly owner: string
  readonly ttlMillis: number
}

/**
 * Which sagas `list` returns.
 *
 * @since 0.1.0
 * @category models
 */
export interface ListFilter {
  readonly status?: ReadonlyArray<SagaStatus> | undefined
  /**
   * Only sagas last written before this time: ISO-8601, a date (midnight UTC) or a date and time
   * with its zone, read as a time as `prune` reads it; anything else fails `list` with `JournalError`.
   */
  readonly updatedBefore?: string | undefined
}

/**
 * The statuses of a saga that still needs something (a worker, an approval, an operator): every
 * status but `completed` and `compensated`.
 *
 * @since 0.2.0
 * @category models
 */
export const OpenStatus = Schema.Literal(
  "running",
  "compensating",
  "suspended",
  "awaiting_approval",
  "needs_attention",
  "compensation_failed"
)

/**
 * @since 0.2.0
 * @category models
 */
export type OpenStatus = typeof OpenStatus.Type

/**
 * How many sagas the store holds under each open status (`countOpen`).
 *
 * @since 0.2.0
 * @category models
 */
export type OpenCounts = { readonly [S in OpenStatus]: number }

export {
  ConcurrencyConflict,
  ErrorTypeId,
  JournalCorrupted,
  JournalError,
  JournalTampered,
  LeaseHeld,
  SagaNotFound,
  TamperProblem
} from "./internal/journal/errors.js"

/**
 * Why an append wrote nothing. One exception: a `JournalError` whose reason ends `whether it was
 * written is unknown: the journal could not be read after (…)` (PostgreSQL: the connection was lost
 * once the append was sent, and the saga could not be read again to find out). The append may have
 * committed; read the saga to know. An append whose connection was lost and that the store holds
 * succeeds (docs/storage.md, "A write whose answer was lost").
 *
 * @since 0.1.0
 * @category errors
 */
export type AppendError = ConcurrencyConflict | LeaseHeld | JournalError

/**
 * Why a lease was not taken.
 *
 * @since 0.1.0
 * @category errors
 */
export type ClaimError = LeaseHeld | JournalError

/**
 * Whether a value is one of the journal's errors (`ConcurrencyConflict`, `LeaseHeld`,
 * `JournalError`, `JournalCorrupted`, `JournalTampered`, `SagaNotFound`), by its `ErrorTypeId`.
 *
 * @since 0.1.0
 * @category guards
 */
export const isJournalError = (
  u: unknown
): u is ConcurrencyConflict | LeaseHeld | JournalError | JournalCorrupted | JournalTampered | SagaNotFound =>
  Predicate.hasProperty(u, ErrorTypeId)

/**
 * The journal service. Backends: `Journal.layerMemory`, `SqlJournal`.
 *
 * @since 0.1.0
 * @category services
 */
export class Journal extends Context.Tag("effect-saga/Journal")<
  Journal,
  {
    /**
     * Appends `drafts` in one atomic step if the saga is still at `expected` (a new saga is at
     * `empty`) and no other worker holds its lease; returns the entries written. With a `holder`,
     * the append takes or renews the lease, and drops it when it sets a status other than running
     * or compensating (the saga halts, waits or ends); an append that sets no status (no saga-level
     * phase) keeps it whatever the saga's status, so that an operator's command on a saga that waits,
     * needs attention or failed to compensate holds it between its writes (since 0.5.0; before, such
     * an append dropped it). Without a holder, it is refused while anybody holds the lease.
     */
    readonly append: (
      sagaId: string,
      expected: Expected,
      drafts: ReadonlyArray<Draft>,
      holder?: Holder
    ) => Effect.Effect<ReadonlyArray<Entry>, AppendError>
    /** Takes the lease of an existing saga (free, lapsed or already the holder's); `None` if there is no such saga. */
    readonly claim: (sagaId: string, holder: Holder) => Effect.Effect<Option.Option<SagaRecord>, ClaimError>
    /**
     * Takes the leases of up to `limit` sagas left behind: running or compensating with a lapsed or
     * no lease, or suspended. Oldest update first; two callers never get the same saga. A lease whose
     * stored end is not a time as the store writes one (a day of the calendar, an hour of the day) never
     * lapses (the row was edited).
     */
    readonly claimLapsed: (holder: Holder, limit: number) => Effect.Effect<ReadonlyArray<SagaRecord>, JournalError>
    /** Extends every lease `holder.owner` holds by `holder.ttlMillis` from now; returns how many. */
    readonly renew: (holder: Holder) => Effect.Effect<number, JournalError>
    /** Drops the lease `owner` holds on `sagaId`, or on every saga when `sagaId` is omitted. */
    readonly release: (owner: string, sagaId?: string) => Effect.Effect<void, JournalError>
    /** Every entry of a saga in `seq` order; none for an unknown saga. */
    readonly read: (sagaId: string) => Effect.Effect<ReadonlyArray<Entry>, JournalError | JournalCorrupted>
    /** A saga's row, if it exists. */
    readonly get: (sagaId: string) => Effect.Effect<Option.Option<SagaRecord>, JournalError>
    /** Saga rows matching `filter`, oldest update first, then oldest created, then saga id (code points). */
    readonly list: (filter?: ListFilter) => Effect.Effect<ReadonlyArray<SagaRecord>, JournalError>
    /** Stores a whole saga's entries as they are (an import); the saga must not exist yet. */
    readonly importSaga: (
      entries: ReadonlyArray<Entry>
    ) => Effect.Effect<SagaRecord, ConcurrencyConflict | JournalError>
    /**
     * Deletes finished sagas with nothing left live (completed, compensated; not compensation
     * failed, which may have left an effect live: it stays until an operator settles it) last
     * updated before `before`: an ISO-8601 date, or date and time with its zone (anything else: `JournalError`).
     * An explicit undo's run goes only with its saga (finished too, whatever its update time), and
     * a saga whose run is not finished stays. Returns the ids deleted, runs included.
     */
    readonly prune: (before: string) => Effect.Effect<ReadonlyArray<string>, JournalError>
    /**
     * What `prune(before)` would delete now, by the same rule, deleting nothing (the stores of this
     * library have it; a journal of your own may leave it out: see `Journal.prunable`).
     */
    readonly prunable?: ((before: string) => Effect.Effect<ReadonlyArray<string>, JournalError>) | undefined
    /** How many sagas are under each open status, counted from an index of open sagas only (never a scan of all). */
    readonly countOpen: () => Effect.Effect<OpenCounts, JournalError>
    /**
     * "Now", in epoch milliseconds, as this store judges a lease: PostgreSQL's `now()`, so that a
     * reader whose clock is off judges leases as the workers do (`Approval.inbox` reads it). Absent
     * (SQLite, memory, a journal of your own): the process's `Clock`, which writes the leases there.
     *
     * @since 0.5.0
     */
    readonly leaseNow?: Effect.Effect<number, JournalError> | undefined
  }
>() {}

/**
 * An in-memory journal for tests and demos: same guarantees, nothing survives the process. With
 * `EFFECT_SAGA_JOURNAL_KEYS` configured, it signs every entry as the SQL stores do. It keeps an
 * entry without what its saga tells (saga id, seq, and the hash it chained itself, chained again on
 * each read), so every `read` returns new entry objects: changing one changes nothing stored (to
 * test a tampered journal, `importSaga` the changed entries, or use a SQL store).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<Journal, KeyError> = Layer.effect(
  Journal,
  Effect.map(journalKeys, (keys) => Journal.of(makeMemoryJournal(Option.getOrUndefined(keys))))
)

/**
 * The hash of an entry given the previous entry's hash: SHA-256 over it and the entry's
 * length-prefixed fields. A saga's first entry chains from `empty.digest` (64 zeros).
 *
 * @since 0.1.0
 * @category hashing
 */
export const hashEntry: (previous: string, entry: Omit<Entry, "hash" | "mac">) => string = hash.hashEntry

export type { Verification } from "./internal/journal/verification.js"

/**
 * Re-computes the hash chain of one saga's entries and names the first entry that does not fit.
 * With `keys` (the journal key ring), every entry must also carry a MAC that verifies under one of
 * them; without them, an entry that carries a MAC cannot be checked and breaks the chain there
 * (`signature`): a signed journal is not taken on its chain alone.
 *
 * @since 0.1.0
 * @category hashing
 */
export const verifyEntries: (entries: ReadonlyArray<Entry>, keys?: KeyRing | undefined) => Verification =
  verification.verifyEntries

/**
 * Verifies a saga's entries against its row: the chain (and MACs) must verify and end exactly at
 * the row's `revision` and `digest`, so that entries removed from the end are found too.
 *
 * @since 0.2.0
 * @category hashing
 */
export const verifyAgainst: (
  entries: ReadonlyArray<Entry>,
  record: SagaRecord | undefined,
  keys?: KeyRing | undefined
) => Verification = verification.verifyAgainst

/**
 * The saga's status after `drafts`: the last saga-level phase decides, otherwise it is unchanged.
 *
 * @since 0.1.0
 * @category models
 */
export const statusAfter: (current: SagaStatus, drafts: ReadonlyArray<Pick<Entry, "phase">>) => SagaStatus =
  status.statusAfter

/**
 * Whether a status is final: the saga will not move on by itself.
 *
 * @since 0.1.0
 * @category models
 */
export const isFinished: (status: SagaStatus) => boolean = status.isFinished

/**
 * Whether a saga with this status is being driven: only then does a lease mean anything.
 *
 * @since 0.1.0
 * @category models
 */
export const isActive: (status: SagaStatus) => boolean = status.isActive

/**
 * What `journal.prune(before)` would delete now, deleting nothing: the ids by the store's own rule
 * (`completed` or `compensated` by its row and by its journal, last updated before `before`; an
 * explicit undo's run only with its saga), as `prune` would return them. The CLI's `prune
 * --dry-run`. A journal of your own, which has no such listing, answers with its rows that say they
 * completed or compensated before `before`.
 *
 * @since 0.4.0
 * @category retention
 */
export const prunable = (before: string): Effect.Effect<ReadonlyArray<string>, JournalError, Journal> =>
  Effect.flatMap(Journal, (journal) => {
    if (journal.prunable !== undefined) return journal.prunable(before)
    const prunable = SagaStatus.literals.filter(status.isPrunable)
    return Effect.map(journal.list({ status: prunable, updatedBefore: before }), (rows) =>
      rows.map((row) => row.sagaId)
    )
  })

/**
 * A saga's entries and row as one state of the saga, and what verifying one against the other says
 * (as `verify` does): what every load, `Saga.status` and the CLI's reads decide a break from. An
 * append that commits while they are read is never taken for a break: a read that finds the row
 * ahead of the entries is made again as the row, the entries and the row again, and shows the saga
 * as the first row left it. `record` is `None` for a saga without a row and for a row that does not
 * decode (`verification` tells which: a break at seq 1, `row`); `entries` is empty when one does not
 * decode (a break, `undecodable`: `storedEntries` reads them as stored). A saga the store holds
 * nothing of reads as no entries, no row, `Intact` (`verify` calls it `SagaNotFound`). A read that
 * finds entries and no row is made again and answered as the second read says, so that a saga
 * pruned between the read of its entries and that of its row (SQLite: two snapshots) reads as one
 * the store holds nothing of, never as a deleted row.
 *
 * MACs are checked with the journal keys the store was built with (`Journal.layerMemory`,
 * `SqlJournal`, `SqlStore`, `Postgres` read `EFFECT_SAGA_JOURNAL_KEYS` then), as `Saga.status`
 * checks them: the variable changed or deleted afterwards changes nothing. Only for a journal of
 * your own, whose keys the library does not know, is the configuration read when this is called.
 *
 * @since 0.5.0
 * @category hashing
 */
export const inspect = (
  sagaId: string
): Effect.Effect<Inspected, JournalError | KeyError | InvalidIdentifier, Journal> =>
  Effect.zipRight(identifier.check("saga id", sagaId, identifier.MAX_JOURNAL_ID_BYTES), Journal).pipe(
    Effect.flatMap((journal) =>
      Effect.flatMap(Signing.keysOf(journal), (keys) => inspected.inspect(journal, sagaId, keys))
    )
  )

export type {
  /**
   * A saga's entries and row, read as one state of the saga, and their verification (`inspect`).
   *
   * @since 0.5.0
   * @category hashing
   */
  Inspected
} from "./internal/journal/inspect.js"

/**
 * Re-computes the hash chain of a stored saga (and its MACs, under the journal keys its store was
 * built with, as `inspect` reads them), and checks that it ends where the saga's row says, with the status its entries set.
 * A stored entry that no longer decodes answers `Broken` with the problem `undecodable`; a saga row
 * that no longer decodes, `Broken` at seq 1 with the problem `row` (as a deleted row). A saga the
 * store holds neither a row nor an entry of is `SagaNotFound`: there is nothing to call intact. An
 * id that cannot be one (not text, empty, a control character, over `Saga.MAX_JOURNAL_ID_BYTES`
 * bytes) is `InvalidIdentifier` (`kind: "saga id"`), as `Saga.status` answers it; nothing is read.
 *
 * @since 0.1.0
 * @category hashing
 */
export const verify = (
  sagaId: string
): Effect.Effect<Verification, JournalError | KeyError | SagaNotFound | InvalidIdentifier, Journal> =>
  // Read as the loads read (inspect.ts): an append committed meanwhile is never taken for a break.
  Effect.flatMap(inspect(sagaId), ({ entries, record, verification }) =>
    entries.length === 0 && Option.isNone(record) && verification._tag === "Intact"
      ? Effect.fail(new SagaNotFound({ sagaId }))
      : Effect.succeed(verification)
  )

/**
 * The payload phase `P` journals, as its schema decodes it (`decodeEntry`). The stored JSON text is
 * part of the format: the hash covers it.
 *
 * @since 0.2.0
 * @category payloads
 */
export type PayloadOf<P extends Phase> = P extends Phase ? (typeof payloads.schemas)[P]["Type"] : never

/**
 * An entry whose payload is decoded with its phase's schema.
 *
 * @since 0.2.0
 * @category payloads
 */
export type Recorded<P extends Phase = Phase> = P extends Phase
  ? Omit<Entry, "phase" | "payload"> & { readonly phase: P; readonly payload: PayloadOf<P> }
  : never

export type { JournaledReceipt } from "./internal/journal/payloads.js"

/**
 * Decodes an entry's payload with its phase's schema, or fails with `JournalCorrupted` naming its
 * saga and seq.
 *
 * @since 0.2.0
 * @category payloads
 */
export const decodeEntry: (entry: Entry) => Either.Either<Recorded, JournalCorrupted> = payloads.decodeEntry

/**
 * Decodes a payload's JSON text with the schema of `phase`, or says why it does not fit.
 *
 * @since 0.2.0
 * @category payloads
 */
export const decodePayload: <P extends Phase>(phase: P, text: string | null) => Either.Either<PayloadOf<P>, string> =
  payloads.decodePayload

/**
 * Encodes a payload of `phase` to the JSON text the journal stores (`null` for a phase without one).
 *
 * @since 0.2.0
 * @category payloads
 */
export const encodePayload: <P extends Phase>(phase: P, payload: PayloadOf<P>) => string | null = payloads.encodePayload

export type { StoredEntry } from "./internal/journal/storedEntries.js"

/**
 * A saga's entries as the store holds them, in `seq` order, each column's value undecoded and
 * unchecked (`StoredEntry`): for forensics when `read` fails with `JournalCorrupted` (a phase or
 * another column edited out of shape), as `effect-saga export` prints them. None of it is to be
 * trusted. An unknown saga has none. The memory journal, whose entries always decode, answers
 * with its entries.
 *
 * @since 0.5.0
 * @category export
 */
export const storedEntries = (
  sagaId: string
): Effect.Effect<ReadonlyArray<StoredEntry>, JournalError | JournalCorrupted, Journal> =>
  Effect.flatMap(Journal, (journal) => readStored(journal, sagaId))

/**
 * The ids of the sagas whose entries the store holds without a row (the row deleted behind the
 * library's back), in code-point order. `list` lists rows, so it never names them; `verify` of
 * each answers `Broken` at seq 1 with the problem `row`. `effect-saga verify --all` verifies them
 * after the listed sagas. The SQL stores answer with one query over the entries; the memory
 * journal, which never holds entries without a row, with none; so does a `Journal` of your own
 * (the service has no method for it): find such sagas in its storage yourself.
 *
 * @since 0.5.0
 * @category hashing
 */
export const sagasWithoutRow: Effect.Effect<ReadonlyArray<string>, JournalError, Journal> = Effect.flatMap(
  Journal,
  listRowless
)

/**
 * A saga's journal as NDJSON: one entry per line, in `seq` order, then an end line
 * (`{"exportEnd":{"sagaId":…,"entries":…,"digest":…}}`) by which `importNdjson` tells a whole
 * export from one cut short. Only a saga whose journal verifies against its row is exported (read
 * as `inspect` reads it, its MACs checked under the keys its store was built with): one that
 * does not is `JournalTampered` (an entry that no longer decodes, `JournalCorrupted`), so that an
 * import never makes a tampered saga, one whose deleted entries the row still counts, say, intact
 * in another store; `storedEntries` gives its entries for forensics. A saga with neither a row nor
 * an entry is `SagaNotFound`; an id no command takes (empty, a control character, over
 * `Saga.MAX_JOURNAL_ID_BYTES` bytes) is `InvalidIdentifier` (`kind: "saga id"`), as `verify`
 * answers it; nothing is read.
 *
 * @since 0.1.0
 * @category export
 */
export const exportNdjson = (
  sagaId: string
): Effect.Effect<
  string,
  JournalError | JournalCorrupted | JournalTampered | KeyError | SagaNotFound | InvalidIdentifier,
  Journal
> =>
  Effect.flatMap(
    inspect(sagaId),
    ({ entries, record, verification }): Effect.Effect<string, JournalCorrupted | JournalTampered | SagaNotFound> => {
      if (verification._tag === "Broken") return Effect.fail(exportRefusal(sagaId, verification))
      if (entries.length === 0 && Option.isNone(record)) return Effect.fail(new SagaNotFound({ sagaId }))
      return Effect.succeed(
        `${entries.map((entry) => `${JSON.stringify(Schema.encodeSync(Entry)(entry))}\n`).join("")}${endLineOf(entries)}\n`
      )
    }
  )

/** Why a saga whose journal does not verify is not exported: an entry that does not decode, or a break. */
const exportRefusal = (
  sagaId: string,
  broken: Extract<Verification, { readonly _tag: "Broken" }>
): JournalCorrupted | JournalTampered =>
  broken.problem === "undecodable"
    ? new JournalCorrupted({ sagaId, seq: broken.seq, reason: broken.reason })
    : new JournalTampered({ sagaId, seq: broken.seq, problem: broken.problem, reason: broken.reason })

// A field no entry has is refused, not dropped: the import would not be the file it was given.
const decodeLine = Schema.decodeUnknownEither(Schema.parseJson(Entry), { onExcessProperty: "error" })

/**
 * Why a line of JSON holding an object is no entry, after a colon, as a stored row's is said
 * (`: phase "HACKED" is not a known phase`); nothing for a line that is no such JSON, whose parser's
 * words could quote it (a receipt).
 */
const whyNotAnEntry = (line: string): string => {
  let parsed: unknown
  try {
    parsed = JSON.parse(line)
  } catch {
    return ": it is not JSON"
  }
  if (!Predicate.isRecord(parsed))
    return `: it is ${Array.isArray(parsed) ? "an array" : typeName(parsed)}, not an object`
  const decoded = Schema.decodeUnknownEither(Entry)(parsed)
  if (Either.isLeft(decoded)) return `: ${describeUndecodable(parsed, decoded.left)}`
  const extra = Object.keys(parsed).find((field) => !(field in Entry.fields))
  // Refused, not dropped: what was imported would not be the file given (an export of a later version, an edited file).
  return extra === undefined
    ? ""
    : `: it has a field no entry has, ${JSON.stringify(extra.slice(0, 60))}, which an import would not keep`
}

/**
 * The first identifier or time of an export that the engine would not have journaled (a saga id,
 * step id, tool name or time out of shape: see `importable.ts`): a saga imported with it could be
 * listed but never commanded.
 */
const refusedIdentifier = (entries: ReadonlyArray<Entry>): JournalCorrupted | undefined =>
  // Text no store keeps (a lone surrogate) is the store's to refuse, with a `JournalError`, as on append.
  entries.some((entry) => unstorableIdentifier(entry) !== undefined) ? undefined : refusedImport(entries)

const unstorableIdentifier = (entry: Entry) =>
  identifier.unstorable(entry.sagaId) ??
  identifier.unstorable(entry.stepId) ??
  identifier.unstorable(entry.toolName) ??
  identifier.unstorable(entry.at)

/**
 * Imports one saga's NDJSON export. Every line must decode (with no field an entry, or the end
 * line, does not have: an import would drop it), belong to one saga, name a saga, its
 * steps and tools as the engine would (`InvalidIdentifier`'s rules), the hash chain must verify (and
 * every entry's MAC, under the journal keys the receiving store was built with, as `inspect` reads
 * them: with none, a signed export is refused, as a signed journal would not verify there),
 * and the last line must be the export's end line, naming this saga, its number of entries and its
 * last hash (an export cut short is refused, not imported as a saga that stopped early); otherwise
 * nothing is written and the error names the first bad line or entry.
 *
 * @since 0.1.0
 * @category export
 */
export const importNdjson = (
  text: string
): Effect.Effect<SagaRecord, JournalCorrupted | ConcurrencyConflict | JournalError | KeyError, Journal> =>
  Effect.gen(function* () {
    // A JavaScript caller may pass anything: what is not text is refused as an import that is no journal.
    if (typeof text !== "string") {
      return yield* new JournalCorrupted({ sagaId: "", seq: 1, reason: `the import is not text but ${typeName(text)}` })
    }
    const lines = text.split("\n").filter((line) => line.trim() !== "")
    const entries: Array<Entry> = []
    let end: ExportEnd["exportEnd"] | undefined
    for (const [index, line] of lines.entries()) {
      const decoded = decodeLine(line)
      const sagaId = entries[0]?.sagaId ?? ""
      if (Either.isLeft(decoded)) {
        end = endOf(line)
        if (end !== undefined && index === lines.length - 1) break
        const unkept = end === undefined ? endFieldUnkept(line) : undefined
        return yield* new JournalCorrupted({
          sagaId,
          seq: index + 1,
          reason:
            end !== undefined
              ? `line ${index + 1} is the export's end line, yet lines follow it`
              : unkept !== undefined
                ? `line ${index + 1} is the export's end line with a field an end line does not have, ${JSON.stringify(unkept.slice(0, 60))}, which an import would not keep`
                : `line ${index + 1} is not a journal entry${whyNotAnEntry(line)}`
        })
      }
      if (entries.length > 0 && decoded.right.sagaId !== sagaId) {
        return yield* new JournalCorrupted({
          sagaId,
          seq: index + 1,
          reason: `line ${index + 1} belongs to another saga`
        })
      }
      entries.push(decoded.right)
    }
    if (entries.length === 0) return yield* new JournalCorrupted({ sagaId: "", seq: 0, reason: "the export is empty" })
    const refused = refusedIdentifier(entries)
    if (refused !== undefined) return yield* refused
    const journal = yield* Journal
    const verification = verifyEntries(entries, yield* Signing.keysOf(journal))
    if (verification._tag === "Broken") {
      return yield* new JournalCorrupted({
        sagaId: entries[0]!.sagaId,
        seq: verification.seq,
        reason: verification.reason
      })
    }
    const cut = endProblem(entries, end)
    if (cut !== undefined) {
      return yield* new JournalCorrupted({ sagaId: entries[0]!.sagaId, seq: entries.length + 1, reason: cut })
    }
    return yield* journal.importSaga(entries)
  })
