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

// The CLI's packages are optional peers of effect-saga (a library user needs neither): name them in one line.
const cliPeers = "@effect/cli@^0.77.2 @effect/platform-node@^0.108.2"
const compiledCli = () =>
  import(compiled.href).catch((error) => {
    if (error?.code !== "ERR_MODULE_NOT_FOUND" || !/@effect\/(cli|platform-node)/.test(error.message)) throw error
    console.error(`effect-saga: the CLI needs packages that are not installed: npm install ${cliPeers}`)
    process.exit(2)
  })

// A SIGINT or SIGTERM while the CLI's modules load (a second or so) finds nothing opened yet: it
// says so and exits 130, as an interrupted command does. cli.main() takes the signals over, its
// listener added before this one is removed: with none left for a moment, Node would close the
// signal's handle, and lose a signal that arrived while the modules loaded but was not delivered yet.
let interrupted = false
const interruptedWhileLoading = () => {
  interrupted = true
  process.stderr.write("effect-saga: interrupted: nothing was written\n", () => process.exit(130))
}
const signals = ["SIGINT", "SIGTERM"]
for (const signal of signals) process.on(signal, interruptedWhileLoading)
const cli = existsSync(compiled) ? await compiledCli() : await fromSource()
if (!interrupted) cli.main()
for (const signal of signals) process.removeListener(signal, interruptedWhileLoading)
