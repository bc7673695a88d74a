/**
 * Free text an error gives, as journaled: a failed step's description, a failed undo's detail. A
 * huge message (a tool that fails with a 5 MB body) is cut, marked, so that the journal, every
 * read of it and every report stay readable.
 */
import { cut } from "../util/printable.js"

/** The most characters of an error's text that are journaled. */
export const MAX_DETAIL = 1000

/** `text`, cut at `MAX_DETAIL` characters with a final `…` when it is longer. */
export const cutDetail = (text: string): string => cut(text, MAX_DETAIL)
