/**
 * The journaling floor: a hand-written five-step saga that does only what journaling a step needs,
 * with no engine around it. Per step: the input encoded with its Schema, an `INTENT` entry chained
 * to the previous entry by SHA-256, the step run, its result encoded, an `EXECUTED` entry chained
 * the same way, both kept in a `Map` (one array of entries a saga), inside a span with
 * `captureStackTrace: false`. No saga-level entries, no ids beyond the step's index, no locks, no
 * checks: what effect-saga's per-step path is measured against.
 */
import * as crypto from "node:crypto"
import { Effect, Schema } from "effect"
import { StepInput, StepResult, steps } from "./steps.js"

const encodeInput = Schema.encodeSync(StepInput)
const encodeResult = Schema.encodeSync(StepResult)

interface FloorEntry {
  readonly seq: number
  readonly phase: "INTENT" | "EXECUTED"
  readonly text: string
  readonly hash: string
}

const GENESIS = "0".repeat(64)
const sha256 = (text: string) => crypto.hash("sha256", text, "hex")

/** Every saga's entries, by saga id. */
export const floorJournal = new Map<string, Array<FloorEntry>>()

const append = (entries: Array<FloorEntry>, phase: FloorEntry["phase"], text: string) => {
  const previous = entries.length === 0 ? GENESIS : entries[entries.length - 1]!.hash
  const seq = entries.length + 1
  entries.push({ seq, phase, text, hash: sha256(`${previous}${seq}:${phase}:${text}`) })
}

/** One saga of the floor: the five steps, each journaled as `INTENT` then `EXECUTED`, in a span. */
export const floorSaga = (n: number) =>
  Effect.suspend(() => {
    const sagaId = `saga-${n}`
    const entries: Array<FloorEntry> = []
    floorJournal.set(sagaId, entries)
    return Effect.forEach(
      steps,
      (step, i) =>
        Effect.withSpan(
          Effect.flatMap(
            Effect.sync(() => append(entries, "INTENT", JSON.stringify(encodeInput({ n })))),
            () => Effect.tap(step, (result) => append(entries, "EXECUTED", JSON.stringify(encodeResult(result))))
          ),
          "floor.step",
          { attributes: { "saga.id": sagaId, step: i }, captureStackTrace: false }
        ),
      { discard: true }
    )
  })
