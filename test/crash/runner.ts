/**
 * How the harness runs ./child.ts. Start-up is most of what a crash costs the harness, and most of
 * a child's start-up under tsx is its loader hooks resolving and transforming module after module
 * (measured on a two-core machine: 1.4 s idle, up to 4 s under load, against 0.4–0.8 s below). So by
 * default the child is compiled once per run, by the esbuild that tsx itself runs on, into one ES
 * module of the project's TypeScript (src/ and test/crash/); packages stay imports that node loads
 * as it does in production. `"tsx"` runs child.ts through tsx, as the other test fixtures do.
 */
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"

/** `"compiled"`: one file compiled up front (the default); `"tsx"`: the TypeScript through tsx's loader. */
export type RunnerKind = "compiled" | "tsx"

/** What `node` is given before the child's own arguments. */
export interface Runner {
  readonly kind: RunnerKind
  readonly nodeArgs: ReadonlyArray<string>
}

/** The root of the project: children run there. */
export const root = fileURLToPath(new URL("../..", import.meta.url))
const script = fileURLToPath(new URL("./child.ts", import.meta.url))

/** The part of esbuild's API used here. */
interface Esbuild {
  readonly build: (options: Record<string, unknown>) => Promise<unknown>
}

/** The esbuild tsx depends on (and so is installed wherever tsx is), not one of our own. */
const esbuildOfTsx = (): Esbuild => {
  const require = createRequire(import.meta.url)
  return createRequire(require.resolve("tsx"))("esbuild") as Esbuild
}

/**
 * Compiles the child into node_modules/.cache (inside the project, so that node resolves its
 * packages from there, and ignored by git), removed when the scope closes.
 */
const compiled = Effect.acquireRelease(
  Effect.tryPromise({
    try: async () => {
      const outfile = path.join(root, "node_modules", ".cache", "effect-saga-crash", `child-${process.pid}.mjs`)
      await esbuildOfTsx().build({
        entryPoints: [script],
        outfile,
        bundle: true,
        packages: "external",
        platform: "node",
        format: "esm",
        target: "node20",
        logLevel: "silent"
      })
      return outfile
    },
    catch: (error) => new Error(`the crash child could not be compiled: ${String(error)}`)
  }),
  (outfile) => Effect.sync(() => fs.rmSync(outfile, { force: true }))
)

/** The runner of that kind, ready for the scope's lifetime. */
export const makeRunner = (kind: RunnerKind): Effect.Effect<Runner, Error, Scope.Scope> =>
  kind === "tsx"
    ? Effect.succeed({ kind, nodeArgs: ["--import", "tsx", script] })
    : Effect.map(compiled, (outfile) => ({ kind, nodeArgs: [outfile] }))
