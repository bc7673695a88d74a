/**
 * The form a stored lease's end must have for the lease to lapse. The stores compare lease times as
 * text, so an end edited out of the form they write (`2025-01-31T12:00:00.000Z`) would otherwise
 * read as lapsed or as held forever by where it sorts (`0garbage` before any time, `garbage` after).
 * Such a lease never lapses: the saga is left to a person (its row reads as tampered), never
 * claimed, overwritten and run.
 */

/** SQL that matches text of a stored time's form: year, month, day, hour, minute, second, milliseconds, `Z`. */
export const storedTimeForm = (onPg: boolean): string =>
  onPg
    ? "~ '^[0-9]{4}-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-5][0-9]\\.[0-9]{3}Z$'"
    : "GLOB '[0-9][0-9][0-9][0-9]-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-5][0-9].[0-9][0-9][0-9]Z'"
