// A library built on effect-saga, compiled with `declaration: true` against effect-saga as npm installs
// it (its package.json and the declarations `tsc` builds). Every value below is exported without a type
// annotation, so its declaration must name effect-saga's types: a type only reachable through a path
// the package does not export (`dist/internal/...`, or a module with no subpath) fails with TS2742.
// Every public module's declaration file must also open with its module comment (its `@since`): `tsc`
// drops a comment attached to an import it leaves out of the declarations, unless a blank line
// detaches it. `npm run typecheck` and `.ci/run` run it.
import { execFileSync } from "node:child_process"
import { copyFileSync, mkdirSync, readFileSync, rmSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"

const here = dirname(fileURLToPath(import.meta.url))
const root = resolve(here, "../..")
const installed = join(here, "node_modules", "effect-saga")
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc")
const run = (...args) => execFileSync(process.execPath, [tsc, ...args], { stdio: "inherit" })

rmSync(join(here, "node_modules"), { recursive: true, force: true })
mkdirSync(installed, { recursive: true })
copyFileSync(join(root, "package.json"), join(installed, "package.json"))
try {
  run(
    "-p",
    join(root, "tsconfig.build.json"),
    "--emitDeclarationOnly",
    "--declarationMap",
    "false",
    "--outDir",
    join(installed, "dist")
  )
  run("-p", join(here, "tsconfig.json"))
} catch {
  process.exitCode = 1
}

const declarations = Object.values(JSON.parse(readFileSync(join(root, "package.json"), "utf8")).exports).map(
  (entry) => entry.types
)
for (const declaration of declarations) {
  const text = readFileSync(join(installed, declaration), "utf8")
  const header = text.startsWith("/**") ? text.slice(0, text.indexOf("*/")) : ""
  if (!header.includes("@since")) {
    console.error(`${declaration} does not open with its module comment (a blank line after it keeps it)`)
    process.exitCode = 1
  }
}
