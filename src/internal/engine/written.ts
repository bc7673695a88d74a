import * as Effect from "effect/Effect"
import { ConcurrencyConflict, LeaseHeld } from "../../Journal.js"
import type { Writer } from "../journal/writer.js"

/**
 * `error`, naming the `written` entries the command had journaled before the write it refuses: a
 * `ConcurrencyConflict` or `LeaseHeld` otherwise says that nothing was written.
 */
export const naming = <E>(error: E, written: number): E => {
  if (written <= 0) return error
  if (error instanceof ConcurrencyConflict) {
    const { actualRevision, expectedRevision, sagaId } = error
    return new ConcurrencyConflict({ sagaId, expectedRevision, actualRevision, written }) as E
  }
  if (error instanceof LeaseHeld) {
    const { expiresAt, owner, sagaId } = error
    return new LeaseHeld({ sagaId, owner, expiresAt, written }) as E
  }
  return error
}

/** Runs `effect`, which writes with `writer`: a write refused after some of its own names them. */
export const namingWrites = <A, E, R>(writer: Writer, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.suspend(() => {
    const before = writer.view.position.revision
    return Effect.mapError(effect, (error) => naming(error, writer.view.position.revision - before))
  })

/** Whether a refused write's error says the command had written entries before it. */
export const wroteBefore = (error: { readonly written?: number | undefined }): boolean =>
  error.written !== undefined && error.written > 0
