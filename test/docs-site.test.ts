/**
 * The docs site as a reader's browser shows it: built into a temporary directory by TypeDoc (with
 * docs/typedoc-plugin.mjs), then opened from the disk in headless Chromium (Debian's, see
 * support/chromium.ts). Nothing is fetched from the network.
 */
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import type { Browser, Page } from "playwright-core"
import { launchChromium } from "./support/chromium.js"

const root = path.resolve(import.meta.dirname, "..")
const site = fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-site-"))
let browser: Browser

/** Opens a page of the site, recording every request that does not read a file of it. */
const open = async (page: string): Promise<{ readonly tab: Page; readonly outside: Array<string> }> => {
  const tab = await browser.newPage({ viewport: { width: 900, height: 800 } })
  const outside: Array<string> = []
  tab.on("request", (request) => {
    if (!request.url().startsWith(pathToFileURL(site).href)) outside.push(request.url())
  })
  await tab.goto(pathToFileURL(path.join(site, page)).href)
  return { tab, outside }
}

describe("the docs site in a browser", () => {
  beforeAll(async () => {
    // Asynchronously: a worker blocked for the build's minute would miss the runner's calls.
    await promisify(execFile)(path.join(root, "node_modules", ".bin", "typedoc"), ["--out", site], { cwd: root })
    browser = await launchChromium()
  }, 300_000)

  afterAll(async () => {
    await browser?.close()
    fs.rmSync(site, { recursive: true, force: true })
  })

  it("the CLI guide draws its Mermaid diagram as an SVG, with nothing from the network", async () => {
    const { tab, outside } = await open("documents/cli.html")
    const drawn = tab.locator("pre.mermaid svg")
    await drawn.first().waitFor({ state: "attached", timeout: 60_000 })
    // Drawn as a sequence diagram (mermaid draws a bomb with the role "error" for a source it cannot read).
    expect(await drawn.evaluateAll((svgs) => svgs.map((svg) => svg.getAttribute("aria-roledescription")))).toEqual([
      "sequence"
    ])
    // The participants of `effect-saga show order-5 --format mermaid` are in the drawing.
    expect(await drawn.locator("text").allTextContents()).toEqual(expect.arrayContaining(["saga order-5", "operator"]))
    expect(outside).toEqual([])
  }, 120_000)

  it("a wide CLI sample scrolls sideways instead of wrapping", async () => {
    const { tab } = await open("documents/cli.html")
    const samples = await tab.locator("pre:not(.mermaid)").evaluateAll((pres) =>
      pres.map((pre) => ({
        whiteSpace: pre.ownerDocument.defaultView!.getComputedStyle(pre).whiteSpace,
        wide: pre.scrollWidth > pre.clientWidth
      }))
    )
    expect(samples.length).toBeGreaterThan(0)
    expect(samples.filter((sample) => sample.whiteSpace !== "pre")).toEqual([])
    expect(samples.some((sample) => sample.wide)).toBe(true)
  }, 60_000)

  it("the index page has one heading", async () => {
    const { tab } = await open("index.html")
    expect(await tab.locator("h1").allTextContents()).toEqual(["effect-saga"])
  }, 60_000)
})
