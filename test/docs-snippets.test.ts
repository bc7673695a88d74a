/**
 * Every ```ts block of README.md and docs/*.md compiles against the package's public exports, as a
 * user imports them (`effect-saga`, `effect-saga/testing`, …: tsconfig.json's paths, which
 * packaging.test.ts holds to package.json's exports), with the repo's compiler options except the
 * unused-name checks (a snippet declares what it shows). One TypeScript program for all blocks.
 *
 * How a doc writes a block:
 * - ```ts — a module of its own: it imports what it uses, and declares a user's own services as
 *   stand-ins where it calls them (`declare const Inventory: { … }`, as the README does).
 * - ```ts continued — the same module as the page's block before it (and so on back to the last
 *   block that is not `continued`): it uses that block's names and imports only what it adds.
 * - ```ts nocheck — not compiled: for a shape that is not TypeScript (say so beside it).
 */
import { readdirSync, readFileSync } from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import ts from "typescript"
import { Manifest } from "../src/index.js"

const root = path.resolve(import.meta.dirname, "..")
const pages = [
  "README.md",
  ...readdirSync(path.join(root, "docs"))
    .filter((file) => file.endsWith(".md"))
    .map((file) => `docs/${file}`)
]

/** A ```ts block: where it starts in its page, its fence's words after `ts`, its code. */
interface Block {
  readonly line: number
  readonly marks: ReadonlyArray<string>
  readonly code: string
}

/** A module made of blocks of one page: the file it is compiled as, and which page line each of its lines is. */
interface Module {
  readonly fileName: string
  readonly text: string
  readonly pageLines: ReadonlyArray<number>
}

/** The words a ```ts fence may carry after `ts`. */
const fenceWords = ["continued", "nocheck"]

const blocksOf = (markdown: string): ReadonlyArray<Block> =>
  [...markdown.matchAll(/^```ts\b(.*)\n([\s\S]*?)^```$/gm)].map((match) => ({
    line: markdown.slice(0, match.index).split("\n").length + 1,
    marks: match[1]!
      .trim()
      .split(/\s+/)
      .filter((word) => word !== ""),
    code: match[2]!
  }))

/** A block's lines (its code ends with a line break). */
const linesOf = (block: Block): ReadonlyArray<string> => block.code.split("\n").slice(0, -1)

/** The page's blocks as modules: each block that is not `continued` starts one; `nocheck` blocks are left out. */
const modulesOf = (page: string, markdown: string): ReadonlyArray<Module> => {
  const groups: Array<Array<Block>> = []
  for (const block of blocksOf(markdown)) {
    const unknown = block.marks.filter((mark) => !fenceWords.includes(mark))
    if (unknown.length > 0) throw new Error(`${page}:${block.line - 1}: unknown fence word(s) ${unknown.join(", ")}`)
    if (block.marks.includes("nocheck")) continue
    if (block.marks.includes("continued")) {
      if (groups.length === 0) throw new Error(`${page}:${block.line - 1}: continued, but no block before it`)
      groups.at(-1)!.push(block)
    } else groups.push([block])
  }
  return groups.map((blocks) => ({
    fileName: path.join(root, `${page}.block-${blocks[0]!.line - 1}.ts`),
    text: blocks.map((block) => block.code).join(""),
    pageLines: blocks.flatMap((block) => linesOf(block).map((_, index) => block.line + index))
  }))
}

const compilerOptions = (): ts.CompilerOptions => {
  const configFile = path.join(root, "tsconfig.json")
  const { config } = ts.readConfigFile(configFile, ts.sys.readFile)
  const { options } = ts.parseJsonConfigFileContent(config, ts.sys, root, undefined, configFile)
  return { ...options, noUnusedLocals: false, noUnusedParameters: false }
}

/** The compiler's errors in the modules, each as `page:line: message`. */
const errorsOf = (modules: ReadonlyArray<Module>): ReadonlyArray<string> => {
  const byFile = new Map(modules.map((module) => [module.fileName, module]))
  const options = compilerOptions()
  const host = ts.createCompilerHost(options)
  const { fileExists, getSourceFile, readFile } = host
  host.fileExists = (fileName) => byFile.has(fileName) || fileExists(fileName)
  host.readFile = (fileName) => byFile.get(fileName)?.text ?? readFile(fileName)
  host.getSourceFile = (fileName, languageVersion, ...rest) => {
    const module = byFile.get(fileName)
    return module === undefined
      ? getSourceFile(fileName, languageVersion, ...rest)
      : ts.createSourceFile(fileName, module.text, languageVersion, true)
  }
  const program = ts.createProgram([...byFile.keys()], options, host)
  const page = (module: Module) => path.relative(root, module.fileName).replace(/\.block-\d+\.ts$/, "")
  return modules.flatMap((module) =>
    ts.getPreEmitDiagnostics(program, program.getSourceFile(module.fileName)).map((diagnostic) => {
      const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n")
      if (diagnostic.file === undefined) return message // the options' or the program's, not a line's
      const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start!)
      return `${page(module)}:${module.pageLines[line]}: ${message}`
    })
  )
}

describe("the docs' TypeScript", () => {
  it("a page's blocks are modules: `continued` joins the one before, `nocheck` is left out", () => {
    const page = [
      "# A page",
      "```ts",
      "const a = 1",
      "```",
      "```ts nocheck",
      "a +",
      "```",
      "```ts continued",
      "a",
      "```"
    ]
    expect(modulesOf("docs/page.md", page.join("\n"))).toEqual([
      { fileName: path.join(root, "docs/page.md.block-2.ts"), text: "const a = 1\na\n", pageLines: [3, 9] }
    ])
    expect(() => modulesOf("docs/page.md", "```ts continue\n```")).toThrow(
      "docs/page.md:1: unknown fence word(s) continue"
    )
    expect(() => modulesOf("docs/page.md", "```ts continued\n```")).toThrow(
      "docs/page.md:1: continued, but no block before it"
    )
  })

  it("every ```ts block of README.md and docs/*.md compiles against the public exports", () => {
    const modules = pages.flatMap((page) => modulesOf(page, readFileSync(path.join(root, page), "utf8")))
    expect(modules.length).toBeGreaterThan(20)
    expect(errorsOf(modules)).toEqual([])
  }, 120_000)

  it.effect("every ```json block of docs/*.md that is a manifest loads with Manifest.parse", () =>
    Effect.gen(function* () {
      const manifests = pages.flatMap((page) =>
        [...readFileSync(path.join(root, page), "utf8").matchAll(/^```json\n([\s\S]*?)^```$/gm)]
          .map((match) => match[1]!)
          .filter((json) => json.includes('"manifest_version"'))
          .map((json) => ({ page, json }))
      )
      expect(manifests.length).toBeGreaterThan(0)
      for (const { page, json } of manifests) {
        const parsed = yield* Effect.either(Manifest.parse(json, { folder: path.join(root, "examples", "manifest") }))
        expect(parsed._tag, `${page}: ${parsed._tag === "Left" ? parsed.left.message : ""}`).toBe("Right")
      }
    })
  )
})
