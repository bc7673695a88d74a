/**
 * What the declaration files of the public modules say: every function a module exports declares
 * its return type, so that its declaration names the type (`CompensationReport`, the `Approval`
 * service) instead of spelling out its structure.
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

describe("the public modules' declarations", () => {
  it("every exported function declares its return type", () => {
    expect(publicModules.flatMap(unannotatedFunctions)).toEqual([])
  })
})
