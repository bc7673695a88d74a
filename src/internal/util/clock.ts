import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"

/** Effect's `Clock` as ISO-8601 UTC text (`TestClock` drives it in tests). */
export const nowIso: Effect.Effect<string> = Effect.map(Clock.currentTimeMillis, (millis) =>
  new Date(millis).toISOString()
)
