/**
 * What a crash-harness child tells its parent: one JSON object per stdout line, marked with a
 * `crash` field (anything else on stdout, a log line say, is not part of the protocol).
 */

/**
 * The child has loaded its code and waits for a `go` line on stdin before it opens anything: the
 * parent starts the next child while the current one still runs, and lets it go once its
 * predecessor is dead.
 */
export interface Loaded {
  readonly crash: "loaded"
  /** From the process's start to here: mostly loading TypeScript through tsx. */
  readonly startupMillis: number
}

/** The child was let go: it opens the journal (as worker "crash-worker") and recovers what its predecessors left behind. */
export interface Opening {
  readonly crash: "opening"
}

/** Recovery is done: in `work` mode the child now starts new sagas until it is killed. */
export interface Ready {
  readonly crash: "ready"
  /** How many sagas the recovery pass claimed, and what became of them (`Failed`: not resumed). */
  readonly recovered: number
  readonly results: Record<string, number>
  readonly recoveryMillis: number
}

/**
 * The first provider call of a new order has been made (so its `INTENT` is committed): from here on
 * a kill finds orders in flight, however slow the machine.
 */
export interface Working {
  readonly crash: "working"
}

/** Something a correct library never does in this harness: a run or a recovery that failed. */
export interface Anomaly {
  readonly crash: "anomaly"
  readonly sagaId: string
  readonly message: string
}

/** In `recover` mode: the last pass found nothing left behind; the child exits. */
export interface Done {
  readonly crash: "done"
  readonly passes: number
}

/** Any line of the protocol. */
export type Message = Loaded | Opening | Ready | Working | Anomaly | Done

/** Writes one message as a line of stdout. */
export const emit = (message: Message): void => {
  process.stdout.write(`${JSON.stringify(message)}\n`)
}

/** The message on `line`, if it is one. */
export const parse = (line: string): Message | undefined => {
  if (!line.startsWith('{"crash":')) return undefined
  try {
    return JSON.parse(line) as Message
  } catch {
    return undefined
  }
}
