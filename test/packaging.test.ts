/**
 * The package as an app installs it: Effect packages are peers (the app's one copy), the README and
 * the getting-started guide state the versions package.json declares, the build fails on a type
 * error, and an entry whose optional peer is missing says in one line what to install.
 * `.ci/consumer` installs the packed tarball into apps outside the repo and runs them.
 */
import { readdirSync, readFileSync } from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import { version as cliVersion } from "../src/internal/cli/app.js"
import { latestMigration } from "../src/internal/sql/migrations.js"
import { peer } from "../src/internal/sql/postgres.js"
import * as OptionalPeer from "../src/internal/util/optionalPeer.js"

const read = (path: string) => readFileSync(new URL(`../${path}`, import.meta.url), "utf8")
const pkg = JSON.parse(read("package.json"))
const peers: Record<string, string> = pkg.peerDependencies
const optional = new Set(Object.keys(pkg.peerDependenciesMeta ?? {}))

/** The `name@range` arguments of the README's `npm install … # tag` lines, by tag. */
const readmeInstalls = (): Map<string, ReadonlyArray<string>> =>
  new Map(
    [...read("README.md").matchAll(/^npm install (.*?)\s+# (.+)$/gm)].map(([, args, tag]) => [
      tag!,
      args!.split(/\s+/).filter((arg) => arg !== "-D" && arg !== "effect-saga")
    ])
  )

describe("the package's dependencies", () => {
  it("has no dependencies of its own: every Effect package is a peer, and a dev dependency at the same range", () => {
    expect(pkg.dependencies).toBeUndefined()
    for (const [name, range] of Object.entries(peers)) {
      expect([name, pkg.devDependencies[name]]).toEqual([name, name.includes("effect") ? range : expect.any(String)])
    }
    expect([...optional].sort()).toEqual([
      "@effect/ai",
      "@effect/cli",
      "@effect/opentelemetry",
      "@effect/platform-node",
      "@effect/sql-pg",
      "pg"
    ])
  })

  it("the README's install lines name every peer at package.json's range, required ones on the first line", () => {
    const installs = readmeInstalls()
    const core = installs.get("effect-saga")!
    const required = Object.entries(peers).filter(([name]) => !optional.has(name))
    expect([...core].sort()).toEqual(required.map(([name, range]) => `${name}@${range}`).sort())
    const stated = [...installs.values()].flat()
    for (const [name, range] of Object.entries(peers)) expect(stated).toContain(`${name}@${range}`)
    expect(installs.get("effect-saga/testing in your tests")).toEqual(["@effect/vitest@^0.30.0", "vitest@^3.2.0"])
    // What the PostgreSQL entry says to install when its driver is missing is what the README says.
    expect(peer.install.split(" ")).toEqual(installs.get("effect-saga/postgres"))
  })

  it("the getting-started guide states the same versions", () => {
    const guide = read("docs/index.md")
    for (const [name, range] of Object.entries(peers)) expect(guide).toContain(`${name}@${range}`)
    expect(guide).toContain("@effect/vitest@^0.30.0")
    expect(guide).toContain("vitest@^3.2.0")
  })

  it("build and prepare fail when the compiler does: nothing swallows its exit code", () => {
    expect(pkg.scripts.build).toMatch(/tsc -p tsconfig\.build\.json$/)
    expect(pkg.scripts.prepare).toBe("npm run build")
    expect(`${pkg.scripts.build} ${pkg.scripts.prepare}`).not.toMatch(/\|\||;/)
  })
})

/** Every `@since` version of the sources' JSDoc. */
const sinceVersions = (): ReadonlyArray<string> =>
  (readdirSync(new URL("../src", import.meta.url), { recursive: true, encoding: "utf8" }) as Array<string>)
    .filter((file) => file.endsWith(".ts"))
    .flatMap((file) => [...read(`src/${file}`).matchAll(/@since (\d+\.\d+\.\d+)/g)].map(([, since]) => since!))

/** `a` before `b` as versions are ordered, part by part. */
const versionOrder = (a: string, b: string): number => {
  const [x, y] = [a.split(".").map(Number), b.split(".").map(Number)]
  return x.map((part, i) => part - y[i]!).find((difference) => difference !== 0) ?? 0
}

describe("the package's version", () => {
  it("is the newest @since of the sources, and --version, the lock file and the install lines say it", () => {
    const newest = [...new Set(sinceVersions())].sort(versionOrder).at(-1)
    expect(pkg.version).toBe(newest)
    expect(cliVersion).toBe(pkg.version)
    const lock = JSON.parse(read("package-lock.json"))
    expect([lock.version, lock.packages[""].version]).toEqual([pkg.version, pkg.version])
    for (const doc of ["README.md", "docs/index.md"]) {
      const tarballs = [...read(doc).matchAll(/effect-saga-(\S+?)\.tgz/g)].map(([, at]) => at)
      expect(tarballs.length, doc).toBeGreaterThan(0)
      expect(new Set(tarballs), doc).toEqual(new Set([pkg.version]))
    }
  })

  it("docs/upgrading.md has a row for it, at the schema version its migrations end at", () => {
    expect(read("docs/upgrading.md")).toContain(`\n| ${pkg.version} | ${latestMigration} | `)
  })
})

describe("the package's subpaths", () => {
  const exported = pkg.exports as Record<string, { readonly types: string; readonly default: string }>
  const modules = readdirSync(new URL("../src", import.meta.url))
    .filter((file) => file.endsWith(".ts") && file !== "index.ts")
    .map((file) => file.slice(0, -".ts".length))
  const subpathOf = (module: string) =>
    Object.keys(exported).find((subpath) => exported[subpath]!.types === `./dist/${module}.d.ts`)

  it("exports every public module, so that a consumer's declaration files can name its types", () => {
    for (const module of modules) {
      const subpath = subpathOf(module)
      expect([module, subpath && exported[subpath]]).toEqual([
        module,
        { types: `./dist/${module}.d.ts`, default: `./dist/${module}.js` }
      ])
    }
    // A module with a lowercase subpath keeps it; every other one is its own name.
    expect(Object.fromEntries(modules.map((module) => [module, subpathOf(module)]))).toMatchObject({
      Agent: "./ai",
      Cli: "./cli",
      handler: "./handler",
      Postgres: "./postgres",
      SagaApi: "./http",
      Testing: "./testing",
      Saga: "./Saga",
      Compensable: "./Compensable",
      Outcome: "./Outcome"
    })
    expect(exported["."]).toEqual({ types: "./dist/index.d.ts", default: "./dist/index.js" })
  })

  it("the repo's own tsconfig resolves each subpath to its source", () => {
    const paths: Record<string, ReadonlyArray<string>> = JSON.parse(read("tsconfig.json")).compilerOptions.paths
    for (const [subpath, target] of Object.entries(exported)) {
      const specifier = subpath === "." ? "effect-saga" : `effect-saga/${subpath.slice(2)}`
      expect([specifier, paths[specifier]]).toEqual([
        specifier,
        [target.types.replace("./dist/", "./src/").replace(".d.ts", ".ts")]
      ])
    }
  })
})

describe("an optional peer that is not installed", () => {
  const missing: OptionalPeer.Peer = { entry: "effect-saga/example", install: "@effect/example@^1.0.0" }

  it("fails the import with one line naming what to install, without the resolution stack", async () => {
    const error = await OptionalPeer.load(missing, () => import("@effect/not-installed" as string)).catch((e) => e)
    expect(error).toBeInstanceOf(Error)
    expect(error.message).toBe(
      "effect-saga/example needs packages that are not installed: npm install @effect/example@^1.0.0"
    )
    expect(error.stack).toBe(`MissingPeerDependency: ${error.message}`)
    expect(error.cause).toBeUndefined()
  })

  it("a peer that is installed but fails as it loads keeps its own error", async () => {
    const broken = new Error("a broken install")
    await expect(OptionalPeer.load(missing, () => Promise.reject(broken))).rejects.toBe(broken)
  })
})
