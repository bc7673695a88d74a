/**
 * What the type checker says to a declaration the library refuses: the rule, in its own words (a
 * `DeclarationError: …` type), not an assignability puzzle.
 */
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import ts from "typescript"

const root = path.resolve(import.meta.dirname, "..")

/** The compiler's errors in `source`, a module of test/ compiled with the repo's options, each as `line: message`. */
const errorsOf = (source: string): ReadonlyArray<string> => {
  const fileName = path.join(root, "test", "type-messages.probe.ts")
  const configFile = path.join(root, "tsconfig.json")
  const { config } = ts.readConfigFile(configFile, ts.sys.readFile)
  const { options } = ts.parseJsonConfigFileContent(config, ts.sys, root, undefined, configFile)
  const host = ts.createCompilerHost(options)
  const { getSourceFile, fileExists } = host
  host.fileExists = (name) => name === fileName || fileExists(name)
  host.getSourceFile = (name, version, ...rest) =>
    name === fileName ? ts.createSourceFile(name, source, version, true) : getSourceFile(name, version, ...rest)
  const program = ts.createProgram([fileName], options, host)
  return ts.getPreEmitDiagnostics(program, program.getSourceFile(fileName)).map((diagnostic) => {
    const { line } = diagnostic.file!.getLineAndCharacterOfPosition(diagnostic.start!)
    return `${line + 1}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n")}`
  })
}

describe("the type checker's words for a refused declaration", () => {
  it("an irreversible tool with an undo: the error names the rule", { timeout: 60_000 }, () => {
    const errors = errorsOf(
      [
        'import { Effect, Schema } from "effect"',
        'import { Compensable } from "../src/index.js"',
        "export const wire = Compensable.make({",
        '  name: "wire",',
        "  input: Schema.String,",
        "  success: Schema.String,",
        '  reversibility: "irreversible",',
        "  execute: (iban) => Effect.succeed(iban),",
        "  compensate: () => Effect.void",
        "})"
      ].join("\n")
    )
    expect(errors).toHaveLength(1)
    expect(errors[0]).toContain(
      "Type '() => Effect.Effect<void, never, never>' is not assignable to type '\"DeclarationError: an irreversible tool cannot declare an undo (use reversibility \\\"compensatable\\\", or drop the undo)\"'"
    )
  })
})
