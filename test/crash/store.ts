/**
 * Where a crash run keeps its journal: an SQLite file, or a PostgreSQL database named by a
 * `postgres://` URL (the harness's `--pg`).
 */
import * as Postgres from "../../src/Postgres.js"
import * as SqlStore from "../../src/SqlStore.js"

/** Whether `journal` names a PostgreSQL database rather than an SQLite file. */
export const isPostgres = (journal: string): boolean => /^postgres(ql)?:\/\//.test(journal)

/** The journal and approvals on `journal`. */
export const storeLayer = (journal: string) =>
  isPostgres(journal)
    ? Postgres.layer({ url: journal, maxConnections: 4 })
    : SqlStore.layerSqlite({ filename: journal })
