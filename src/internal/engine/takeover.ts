/**
 * Which sagas this worker left `running`, and where: how a run tells a takeover from its own
 * worker's replay. A saga found `running` that this worker did not leave at that very position was
 * driven by another worker that stopped (its process died, its lease lapsed): the run that takes it
 * over journals `SAGA_RESUMED` with its first write, as it does for a saga that was suspended.
 */
import type { JournalView } from "../journal/view.js"
import type { Writer } from "../journal/writer.js"

export class LeftRunning {
  /** The digest each saga was at when a run of this worker left it running. */
  private readonly at = new Map<string, string>()

  /** Whether a run that loaded `view` takes the saga over: it is running, and not where this worker left it. */
  takesOver(sagaId: string, view: JournalView): boolean {
    return view.exists && view.status === "running" && this.at.get(sagaId) !== view.position.digest
  }

  /**
   * A run of this worker ends: a saga it leaves running (its marker written, or none needed) is
   * remembered at its position, any other is forgotten. A takeover that wrote nothing has not
   * happened yet: the next run journals it. A run that never saw the saga (started unread, it found
   * the saga there and starts over, read) changes nothing of what is remembered.
   */
  leave(writer: Writer): void {
    const { sagaId, view } = writer
    if (!view.exists) return
    if (view.status === "running" && !writer.markerPending) this.at.set(sagaId, view.position.digest)
    else this.at.delete(sagaId)
  }
}
