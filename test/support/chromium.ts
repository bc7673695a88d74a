/**
 * Headless Chromium for browser checks: Debian's `chromium` package (installed by `.ci/run` when
 * missing), driven by playwright-core. Nothing here downloads a browser build.
 */
import { existsSync } from "node:fs"
import { type Browser, chromium } from "playwright-core"

const candidates = [process.env.EFFECT_SAGA_CHROMIUM, "/usr/bin/chromium", "/usr/bin/chromium-browser"]

/** The Chromium binary on this machine, or an error that says how to install it. */
export const chromiumPath = (): string => {
  const found = candidates.find((path): path is string => path !== undefined && existsSync(path))
  if (found === undefined) {
    throw new Error("no Chromium found: `apt-get install chromium` (or set EFFECT_SAGA_CHROMIUM)")
  }
  return found
}

/** Launches headless Chromium; close the browser when done. */
export const launchChromium = (): Promise<Browser> =>
  chromium.launch({
    executablePath: chromiumPath(),
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
  })
