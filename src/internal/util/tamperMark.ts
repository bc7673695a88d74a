/**
 * What a tamper mark is about: the approvals table alone, disagreeing with a journal that verifies
 * (its `problem` is `approval`, or it names no seq), or a break in the journal itself. Every reader
 * (`show`, `approvals`, the console) words the two apart: of the first, no new decision and `show`
 * says what to do; of the second, nothing past the break is a fact.
 *
 * @since 0.5.0
 */

/** A mark as every reader carries it. */
export interface Mark {
  readonly seq: number | null
  readonly problem: string
}

/**
 * Whether `mark` is the approvals table's alone, not a break in the journal.
 *
 * @since 0.5.0
 */
export const onlyTheTable = (mark: Mark): boolean => mark.problem === "approval" || mark.seq === null
