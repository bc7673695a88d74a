/**
 * Which failures of a write leave its outcome unknown (src/internal/sql/sqlite.ts
 * `leavesOutcomeUnknown`): only those the journal reads the saga again after.
 */
import { SqlError } from "@effect/sql/SqlError"
import { describe, expect, it } from "@effect/vitest"
import { leavesOutcomeUnknown, neverReachedServer } from "../src/internal/sql/sqlite.js"

/** A driver's error as `@effect/sql` wraps it. */
const failed = (message: string, code?: string) =>
  new SqlError({ cause: Object.assign(new Error(message), code === undefined ? {} : { code }), message: "Failed" })

describe("a write's failure that leaves its outcome unknown", () => {
  it("is a connection lost under the statement: by the driver, the socket, or the server going away", () => {
    expect(leavesOutcomeUnknown(failed("Connection terminated unexpectedly"))).toBe(true)
    expect(leavesOutcomeUnknown(failed("read ECONNRESET", "ECONNRESET"))).toBe(true)
    expect(leavesOutcomeUnknown(failed("write EPIPE", "EPIPE"))).toBe(true)
    expect(leavesOutcomeUnknown(failed("terminating connection due to administrator command", "57P01"))).toBe(true)
    expect(leavesOutcomeUnknown(failed("connection failure", "08006"))).toBe(true)
  })

  it("is not an error the server answered, SQLite's, or a connection never made", () => {
    expect(leavesOutcomeUnknown(failed("duplicate key value violates unique constraint", "23505"))).toBe(false)
    expect(leavesOutcomeUnknown(failed("could not serialize access", "40001"))).toBe(false)
    expect(leavesOutcomeUnknown(failed("canceling statement due to statement timeout", "57014"))).toBe(false)
    expect(leavesOutcomeUnknown(failed("canceling statement due to lock timeout", "55P03"))).toBe(false)
    expect(leavesOutcomeUnknown(failed('syntax error at or near "x"', "42601"))).toBe(false)
    expect(leavesOutcomeUnknown(failed("disk I/O error", "SQLITE_IOERR"))).toBe(false)
    expect(leavesOutcomeUnknown(failed("connect ECONNREFUSED 127.0.0.1:5432", "ECONNREFUSED"))).toBe(false)
    expect(leavesOutcomeUnknown(failed("timeout exceeded when trying to connect"))).toBe(false)
  })

  it("a connection never made is told apart: the write sent nothing (its JournalError says it was not written)", () => {
    expect(neverReachedServer(failed("connect ECONNREFUSED 127.0.0.1:5432", "ECONNREFUSED"))).toBe(true)
    expect(neverReachedServer(failed("getaddrinfo ENOTFOUND db.internal", "ENOTFOUND"))).toBe(true)
    expect(neverReachedServer(failed("the database system is shutting down", "57P03"))).toBe(true)
    expect(neverReachedServer(failed("timeout exceeded when trying to connect"))).toBe(true)
    expect(neverReachedServer(failed("Connection terminated unexpectedly"))).toBe(false)
    expect(neverReachedServer(failed("read ECONNRESET", "ECONNRESET"))).toBe(false)
    expect(neverReachedServer(failed("could not serialize access", "40001"))).toBe(false)
    expect(neverReachedServer(failed("disk I/O error", "SQLITE_IOERR"))).toBe(false)
  })
})
