/**
 * Secrets replaced by `<redacted>` in a text that came from outside (what a handler wrote, a tool's
 * error message or field, a reason a tool gave): in each of the forms a handler is likely to write
 * one in, every occurrence found first, and each run of occurrences that overlap or touch replaced
 * once, so that no part of any secret is left between two of them. Only such texts are masked: the
 * library masks the parts, then composes its message around them, so that its own words never pass
 * through the mask (a receipt `t` would make `outcome unknown` unreadable).
 */

import * as Cause from "effect/Cause"

/** What a masked secret reads. */
export const REDACTED = "<redacted>"

/** A secret inside a JSON string: `"` and `\` escaped, control characters as `\n`, `\u001b`. */
const jsonEscaped = (secret: string): string => JSON.stringify(secret).slice(1, -1)

/** The same, every character past ASCII as `\uXXXX` (lower-case hex): what Python's `json.dumps` writes. */
const jsonAscii = (secret: string): string =>
  jsonEscaped(secret).replace(/[\u0080-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`)

/** A secret in a URL: `encodeURIComponent`'s form and a form body's (`URLSearchParams`, a space as `+`). */
const urlEncoded = (secret: string): ReadonlyArray<string> => {
  try {
    return [encodeURIComponent(secret), new URLSearchParams({ s: secret }).toString().slice(2)]
  } catch {
    // A lone surrogate has no URL form: there is nothing to look for.
    return []
  }
}

/** Every form of every secret to look for: as it is, JSON-escaped (two ways), URL-encoded (two ways). */
const formsOf = (mask: ReadonlyArray<string>): ReadonlyArray<string> => {
  const forms = new Set<string>()
  for (const secret of mask) {
    if (secret === "") continue
    for (const form of [secret, jsonEscaped(secret), jsonAscii(secret), ...urlEncoded(secret)]) forms.add(form)
  }
  return [...forms]
}

/** Where a secret is: `[start, end)` in the text. */
type Span = readonly [number, number]

/** Where `text` already reads `<redacted>`: the mark of a secret masked before. */
const marksOf = (text: string): Array<Span> => {
  const marks: Array<Span> = []
  for (let at = text.indexOf(REDACTED); at !== -1; at = text.indexOf(REDACTED, at + REDACTED.length)) {
    marks.push([at, at + REDACTED.length])
  }
  return marks
}

/**
 * Every occurrence of every form in `text`, overlapping ones of the same form included, except one
 * inside a `<redacted>` already there: a text masked once (a journaled error, replayed) keeps its
 * marks readable when it is masked again, whatever the secret (`d`, `act`).
 */
const spansOf = (text: string, forms: ReadonlyArray<string>): Array<Span> => {
  const spans: Array<Span> = []
  const marks = text.includes(REDACTED) ? marksOf(text) : []
  const insideMark = (start: number, end: number) => marks.some(([from, to]) => from <= start && end <= to)
  for (const form of forms) {
    for (let at = text.indexOf(form); at !== -1; at = text.indexOf(form, at + 1)) {
      if (!insideMark(at, at + form.length)) spans.push([at, at + form.length])
    }
  }
  return spans
}

/** `text` with each run of spans that overlap or touch replaced by one `<redacted>`. */
const redact = (text: string, spans: Array<Span>): string => {
  if (spans.length === 0) return text
  spans.sort((a, b) => a[0] - b[0])
  let shown = text.slice(0, spans[0]![0])
  let end = spans[0]![1]
  for (const [start, stop] of spans) {
    if (start > end) {
      shown += `${REDACTED}${text.slice(end, start)}`
      end = stop
    } else if (stop > end) {
      end = stop
    }
  }
  return `${shown}${REDACTED}${text.slice(end)}`
}

/**
 * `text` with every secret of `mask` replaced, in each of its forms (`formsOf`): where two secrets
 * overlap or touch (a secret that begins another, one that ends where another begins), one
 * `<redacted>` replaces them both.
 */
export const masked = (text: string, mask: ReadonlyArray<string>): string => redact(text, spansOf(text, formsOf(mask)))

/** `text`, cut short, masked, and without the start of a secret (in any form) that the cut left at its end. */
export const maskedCut = (text: string, mask: ReadonlyArray<string>): string => {
  const forms = formsOf(mask)
  let started = 0
  for (const form of forms) {
    for (let length = Math.min(form.length - 1, text.length); length > started; length--) {
      if (text.endsWith(form.slice(0, length))) started = length
    }
  }
  const spans = spansOf(text, forms)
  if (started > 0) spans.push([text.length - started, text.length])
  return redact(text, spans)
}

/** A JSON value with every text in it, keys included, masked by `mask`. */
export const maskedTexts = (value: unknown, mask: (text: string) => string): unknown => {
  if (typeof value === "string") return mask(value)
  if (Array.isArray(value)) return value.map((item) => maskedTexts(item, mask))
  if (typeof value !== "object" || value === null) return value
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [mask(key), maskedTexts(item, mask)]))
}

/** Errors the library composed around parts it had masked already: masking them again would mask its own words. */
const composedMasked = new WeakSet<object>()

/**
 * Marks `error` as composed by the library from its own words and parts it masked (an engine's
 * timeout, a manifest handler's outcome): `isComposedMasked` says so, and nothing masks it again.
 */
export const composedOfMasked = <E extends object>(error: E): E => {
  // An error failed with (`yield* Outcome.failed(…)`) arrives in the proxy that carries its span.
  composedMasked.add(Cause.originalError(error))
  return error
}

/** Whether `error` was marked by `composedOfMasked` (or is the proxy `Effect.fail` wraps it in to carry its span). */
export const isComposedMasked = (error: unknown): boolean => {
  const original = Cause.originalError(error)
  return typeof original === "object" && original !== null && composedMasked.has(original)
}
