#!/usr/bin/env node
// effect-saga: the operator's command line (docs/cli.md).
//
// It runs the compiled CLI in dist/: the published package ships it, and in a clone `npm install`
// builds it (the `prepare` script; `npm run build` after changing src/). Without dist/, in a clone
// whose dev dependencies are installed, it runs the TypeScript source through tsx instead.
import { existsSync } from "node:fs"

const compiled = new URL("../dist/Cli.js", import.meta.url)

const fromSource = async () => {
  try {
    const { register } = await import("tsx/esm/api")
    register()
  } catch {
    console.error("effect-saga: dist/ is not built and tsx is not installed: run `npm run build` (or `npm install`)")
    process.exit(2)
  }
  return import(new URL("../src/Cli.ts", import.meta.url).href)
}

const cli = existsSync(compiled) ? await import(compiled.href) : await fromSource()
cli.main()
