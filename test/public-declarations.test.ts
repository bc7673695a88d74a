/**
 * What the declaration files of the public modules say: every function a module exports declares
 * its return type, so that its declaration names the type (`CompensationReport`, the `Approval`
 * service) instead of spelling out its structure; and every export, re-exports included, has a
 * description, an `@since` and an `@category` where its declaration is.
 */
import { readdirSync, readFileSync } from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import ts from "typescript"

const src = new URL("../src/", import.meta.url)
const publicModules = readdirSync(src).filter((file) => file.endsWith(".ts"))
const parsed = (file: string) =>
  ts.createSourceFile(file, readFileSync(new URL(file, src), "utf8"), ts.ScriptTarget.Latest, true)

const isExported = (statement: ts.Statement) =>
  ts.canHaveModifiers(statement) &&
  (ts.getModifiers(statement) ?? []).some((modifier) => modifier.kind === ts.SyntaxKind.ExportKeyword)

/** The exported `const`s of `file` that are functions with neither a type nor a return type. */
const unannotatedFunctions = (file: string): ReadonlyArray<string> =>
  parsed(file)
    .statements.filter(ts.isVariableStatement)
    .filter(isExported)
    .flatMap((statement) => statement.declarationList.declarations)
    .filter(
      (declaration) =>
        declaration.type === undefined &&
        declaration.initializer !== undefined &&
        (ts.isArrowFunction(declaration.initializer) || ts.isFunctionExpression(declaration.initializer)) &&
        declaration.initializer.type === undefined
    )
    .map((declaration) => `${file}: ${declaration.name.getText()}`)

/** What the JSDoc of each export of the public modules (but the index's namespaces) lacks. */
const undocumentedExports = (): ReadonlyArray<string> => {
  const files = publicModules.filter((file) => file !== "index.ts").map((file) => new URL(file, src).pathname)
  const program = ts.createProgram(files, {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    skipLibCheck: true,
    noEmit: true
  })
  const checker = program.getTypeChecker()
  return files.flatMap((file) =>
    checker.getExportsOfModule(checker.getSymbolAtLocation(program.getSourceFile(file)!)!).flatMap((exported) => {
      const declared = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported
      const tags = [...exported.getJsDocTags(checker), ...declared.getJsDocTags(checker)].map((tag) => tag.name)
      const described = [declared, exported].some((symbol) => symbol.getDocumentationComment(checker).length > 0)
      const missing = [
        ...(described ? [] : ["a description"]),
        ...(tags.includes("since") ? [] : ["@since"]),
        ...(tags.includes("category") ? [] : ["@category"])
      ]
      return missing.length === 0
        ? []
        : [`${file.slice(src.pathname.length)}: ${exported.name} lacks ${missing.join(", ")}`]
    })
  )
}

describe("the public modules' declarations", () => {
  it("every exported function declares its return type", () => {
    expect(publicModules.flatMap(unannotatedFunctions)).toEqual([])
  })

  it("every export has a description, an @since and an @category", { timeout: 60_000 }, () => {
    expect(undocumentedExports()).toEqual([])
  })
})
