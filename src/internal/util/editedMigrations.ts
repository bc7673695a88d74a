/**
 * Why a journal whose record of migrations was emptied or dropped while its tables exist is
 * refused: migrating its tables again would fail on a table that exists. Said alike by the layers
 * (which know which of the two it was: `how`) and the CLI (which reads the version only).
 */
export const editedMigrationsRecord = (
  where: string | undefined,
  how: "is empty" | "is missing" | "is empty or missing"
): string =>
  `the journal${where === undefined ? "" : ` at ${where}`} records no migration (its effect_saga_migrations table ${how}) while its tables exist: the record was edited; restore it from a backup (nothing was written)`
