/**
 * A value from outside (a tool's error, a defect, what either holds) with its texts masked and its
 * shape kept: the same class, the same fields, every text in them masked. Whatever then composes a
 * message from it — its own `message` getter (`outcome unknown: ${reason}`), `Cause.pretty`, the
 * library's descriptions — composes it from masked parts, and its own words never pass through the
 * mask.
 */
import * as Redacted from "effect/Redacted"
import { REDACTED } from "./masking.js"

type Mask = (text: string) => string

/** The field that names a value's type: kept as it is, as the names of a class's fields are. */
const TAG = "_tag"

/** How deep a value is copied: an object deeper than that (a long chain of causes) is `<redacted>` whole. */
export const MAX_MASKED_DEPTH = 64

/**
 * `value` with every text in it masked: a string; the fields of an error or of another class's
 * instance (their names kept), its message and its `cause`; the keys and values of a plain object
 * or a `Map` (a `_tag` kept); the items of an array or a `Set`; the value a `Redacted` holds (a new
 * `Redacted` of it masked). What holds no text (a `Date`, bytes, a function) is kept. The value
 * itself when no text changes.
 *
 * NOTE: an error whose copy cannot say its message (a getter that reads a private `#field`, which
 * a copy does not have) becomes a plain `Error` of the same name (and `_tag`) whose message is the
 * original's, masked whole. An object nested deeper than `MAX_MASKED_DEPTH` is `<redacted>` whole.
 */
export const maskedValue = (value: unknown, mask: Mask): unknown => {
  const masking = new Masking(mask)
  const copy = masking.of(value)
  return masking.changed ? copy : value
}

class Masking {
  changed = false
  /** The copy of each object met so far: a cycle (an error that is its own cause) stays a cycle. */
  private readonly copies = new Map<object, unknown>()
  private depth = 0
  constructor(private readonly mask: Mask) {}

  of(value: unknown): unknown {
    if (typeof value === "string") return this.text(value)
    if (Redacted.isRedacted(value)) return this.redacted(value)
    if (typeof value !== "object" || value === null || keptAsItIs(value)) return value
    const copied = this.copies.get(value)
    if (copied !== undefined) return copied
    if (this.depth >= MAX_MASKED_DEPTH) {
      this.changed = true
      return REDACTED
    }
    this.depth++
    try {
      return this.copyOf(value)
    } finally {
      this.depth--
    }
  }

  private copyOf(value: object): unknown {
    if (Array.isArray(value)) {
      return this.remember(value, Array.of<unknown>(), (copy) => {
        for (const item of value) copy.push(this.of(item))
      })
    }
    if (value instanceof Map) {
      return this.remember(value, new Map(), (copy) => {
        for (const [key, item] of value) copy.set(this.of(key), this.of(item))
      })
    }
    if (value instanceof Set) {
      return this.remember(value, new Set(), (copy) => {
        for (const item of value) copy.add(this.of(item))
      })
    }
    const copy = this.remember(value, Object.create(Object.getPrototypeOf(value)) as object, (copy) =>
      this.fields(value, copy)
    )
    return value instanceof Error ? this.error(value, copy as Error) : copy
  }

  /** A `Redacted` whose value holds a receipt, as a new one of the masked value: what its holder unwraps is masked too. */
  private redacted(value: Redacted.Redacted<unknown>): unknown {
    const inner = Redacted.value(value)
    const shown = this.of(inner)
    return shown === inner ? value : Redacted.make(shown)
  }

  private text(text: string): string {
    const shown = this.mask(text)
    if (shown !== text) this.changed = true
    return shown
  }

  private remember<C extends object>(value: object, copy: C, fill: (copy: C) => void): C {
    this.copies.set(value, copy)
    fill(copy)
    return copy
  }

  /** Copies `value`'s own properties onto `copy`, texts masked: a plain object's keys too, but `_tag`. */
  private fields(value: object, copy: object): void {
    const plain = isPlain(value)
    for (const key of Reflect.ownKeys(value)) {
      // An error's stack is written afresh (`error`): its first lines are its message.
      if (key === "stack" && value instanceof Error) continue
      const descriptor = Object.getOwnPropertyDescriptor(value, key)!
      // A getter of the instance's own reads the copy: what it composes comes from masked fields.
      if (!("value" in descriptor)) {
        Object.defineProperty(copy, key, descriptor)
        continue
      }
      const name = plain && typeof key === "string" && key !== TAG ? this.text(key) : key
      const item =
        key === TAG && typeof descriptor.value === "string"
          ? descriptor.value
          : // Under a symbol, only data of the value's own (Effect keeps an error's arguments there), not a span.
            typeof key === "symbol" && typeof descriptor.value === "object" && !isData(descriptor.value)
            ? descriptor.value
            : this.of(descriptor.value)
      Object.defineProperty(copy, name, { ...descriptor, value: item })
    }
  }

  /** The copy of an error, its stack's first line saying the copy's message; a plain `Error` if it cannot say one. */
  private error(original: Error, copy: Error): Error {
    const header = headerOf(copy)
    if (header === undefined) return this.plainError(original)
    const stack = typeof original.stack === "string" ? original.stack : ""
    const originalHeader = headerOf(original)
    // The frames (code locations) stay; the lines of the original's message do not.
    const frames =
      originalHeader !== undefined && stack.startsWith(originalHeader) ? stack.slice(originalHeader.length) : ""
    Object.defineProperty(copy, "stack", { value: `${header}${frames}`, writable: true, configurable: true })
    return copy
  }

  private plainError(original: Error): Error {
    this.changed = true
    const error = new Error(this.text(messageOf(original)))
    error.name = original.name
    error.stack = headerOf(error)!
    const tag = (original as { readonly [TAG]?: unknown })[TAG]
    return typeof tag === "string" ? Object.assign(error, { [TAG]: tag }) : error
  }
}

/** Values that hold no text of their own to mask, or must stay as they are. */
const keptAsItIs = (value: object): boolean =>
  value instanceof Date ||
  value instanceof RegExp ||
  value instanceof Promise ||
  value instanceof WeakMap ||
  value instanceof WeakSet ||
  value instanceof ArrayBuffer ||
  ArrayBuffer.isView(value)

const isPlain = (value: object): boolean => {
  const prototype = Object.getPrototypeOf(value)
  return prototype === Object.prototype || prototype === null
}

const isData = (value: unknown): boolean =>
  typeof value === "object" && value !== null && (Array.isArray(value) || isPlain(value))

/** An error's message, or nothing when reading it throws. */
const messageOf = (error: Error): string => {
  try {
    return String(error.message)
  } catch {
    return ""
  }
}

/** The first line of an error's stack as V8 writes it (`Name: message`), or `undefined` if it cannot be read. */
const headerOf = (error: Error): string | undefined => {
  try {
    const message = String(error.message)
    const name = String(error.name)
    return message === "" ? name : `${name}: ${message}`
  } catch {
    return undefined
  }
}
