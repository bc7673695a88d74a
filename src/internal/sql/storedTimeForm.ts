/**
 * The form a stored lease's end must have for the lease to lapse. The stores compare lease times as
 * text, so an end edited out of the form they write (`2025-01-31T12:00:00.000Z`) would otherwise
 * read as lapsed or as held forever by where it sorts (`0garbage` before any time, `garbage` after;
 * `2000-19-39T29:00:00.000Z` before now, though no such time exists). Such a lease never lapses: the
 * saga is left to a person (its row reads as tampered), never claimed, overwritten and run.
 */

/** The digits' places of a stored time, as a `GLOB` pattern. */
const sqliteShape = "'[0-9][0-9][0-9][0-9]-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-5][0-9].[0-9][0-9][0-9]Z'"

/** A day of the calendar: 31 days in 7 months, 30 in 4, 28 in February, and February 29 of a leap year. */
const pgDate =
  "([0-9]{4}-((0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01])|(0[469]|11)-(0[1-9]|[12][0-9]|30)|02-(0[1-9]|1[0-9]|2[0-8]))" +
  "|([0-9]{2}(0[48]|[2468][048]|[13579][26])|([02468][048]|[13579][26])00)-02-29)"

/**
 * SQL that is true when `column` holds a time as the stores write it: a day of the calendar, an hour
 * of it, milliseconds and `Z`. On SQLite, the text has the form's digits, an hour before 24 (its
 * `strftime` reads `T24:00` as the next day's midnight, yet writes the hour back as `24`), and reads
 * back the same through `strftime` (which moves `2000-02-30` to March 1st); on PostgreSQL, a regular
 * expression.
 */
export const storedTimeForm = (onPg: boolean, column: string): string =>
  onPg
    ? `${column} ~ '^${pgDate}T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]\\.[0-9]{3}Z$'`
    : `(${column} GLOB ${sqliteShape} AND substr(${column}, 12, 2) < '24' AND strftime('%Y-%m-%dT%H:%M:%fZ', ${column}) IS ${column})`
