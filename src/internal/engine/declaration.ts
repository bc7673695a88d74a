import type * as Schema from "effect/Schema"
import * as AST from "effect/SchemaAST"
import { toolNameProblem } from "../util/identifier.js"
import type { StepSpec } from "./spec.js"

/** Why a schema's encoded form cannot be journaled as JSON, if it cannot. */
export const notJson = (schema: Schema.Schema<any, any>): string | undefined => {
  const seen = new Set<AST.AST>()
  const visit = (ast: AST.AST): string | undefined => {
    if (seen.has(ast)) return undefined
    seen.add(ast)
    switch (ast._tag) {
      case "Declaration":
        return `its encoded form is a declared type (${String(AST.getIdentifierAnnotation(ast).pipe((o) => (o._tag === "Some" ? o.value : "opaque")))}) with no JSON encoding`
      case "BigIntKeyword":
        return "its encoded form has a bigint, which JSON cannot hold (use Schema.BigInt to encode it as a string)"
      case "SymbolKeyword":
      case "UniqueSymbol":
        return "its encoded form has a symbol, which JSON cannot hold"
      case "Refinement":
        return visit(ast.from)
      case "Transformation":
        return visit(ast.from)
      case "Suspend":
        return visit(ast.f())
      case "Union":
        return firstOf(ast.types.map(visit))
      case "TupleType":
        return firstOf([
          ...ast.elements.map((element) => visit(element.type)),
          ...ast.rest.map((rest) => visit(rest.type))
        ])
      case "TypeLiteral":
        return firstOf([
          ...ast.propertySignatures.map((property) => visit(property.type)),
          ...ast.indexSignatures.map((index) => visit(index.type))
        ])
      default:
        return undefined
    }
  }
  return visit(AST.encodedAST(schema.ast))
}

const firstOf = (reasons: ReadonlyArray<string | undefined>): string | undefined =>
  reasons.find((reason) => reason !== undefined)

/** Whether a schema's values carry nothing an undo could target (void, undefined, a constant). */
export const carriesNothing = (schema: Schema.Schema<any, any>): boolean => {
  const ast = AST.typeAST(schema.ast)
  return ast._tag === "VoidKeyword" || ast._tag === "UndefinedKeyword" || ast._tag === "Literal"
}

/** Why a declaration cannot work; `schema`: the schema at fault and why, when the problem is a schema's. */
export interface Problem {
  readonly reason: string
  readonly schema?: { readonly role: "input" | "success" | "failure"; readonly cause: string }
}

const checked = new WeakMap<StepSpec, Problem | undefined>()

/** The first problem of a declaration, if any (checked once per declaration). */
export const declarationProblem = (spec: StepSpec): Problem | undefined => {
  if (checked.has(spec)) return checked.get(spec)
  const problem = findProblem(spec)
  checked.set(spec, problem)
  return problem
}

/** The first reason a declaration cannot work, if any. */
export const problemOf = (spec: StepSpec): string | undefined => declarationProblem(spec)?.reason

const findProblem = (spec: StepSpec): Problem | undefined => {
  const reason = optionsProblem(spec)
  if (reason !== undefined) return { reason }
  const schemas = [
    ["input", spec.input],
    ["success", spec.success],
    ["failure", spec.failure]
  ] as const
  for (const [role, schema] of schemas) {
    const cause = schema === undefined ? undefined : notJson(schema)
    if (cause !== undefined)
      return { reason: `its ${role} schema cannot be journaled: ${cause}`, schema: { role, cause } }
  }
  return undefined
}

/** A capability as the journal and the timeline carry it: one word (`network`, `env:API_HOST`). */
const CAPABILITY = /^[A-Za-z0-9][A-Za-z0-9_.:/@=+-]{0,199}$/

const optionsProblem = (spec: StepSpec): string | undefined => {
  const badName = toolNameProblem(spec.name)
  if (badName !== undefined) return `its name cannot be journaled: ${badName}`
  if (spec.optionProblem !== undefined) return spec.optionProblem
  if (spec.reversibility === "irreversible" && spec.compensate !== undefined) {
    return 'an irreversible tool cannot declare an undo (use reversibility "compensatable", or drop the undo)'
  }
  if (spec.undoCapabilities !== undefined && spec.compensate === undefined) {
    return "it declares undoCapabilities but no undo: nothing would run with them (declare compensate, or drop undoCapabilities)"
  }
  const capability = [...(spec.capabilities ?? []), ...(spec.undoCapabilities ?? [])].find(
    (word) => !CAPABILITY.test(word)
  )
  if (capability !== undefined) {
    return `capability ${JSON.stringify(capability)} is not one word of at most 200 letters, digits and _ . : / @ = + - (as network, env:API_HOST): the timeline prints it among its own words`
  }
  if (!Number.isInteger(spec.maxPayloadBytes) || spec.maxPayloadBytes <= 0) {
    return `maxPayloadBytes must be a positive integer, got ${spec.maxPayloadBytes}`
  }
  return undefined
}

/** A warning worth logging about a declaration that works but may not do what its author thinks. */
export const warningOf = (spec: StepSpec): string | undefined =>
  spec.compensate !== undefined && carriesNothing(spec.success)
    ? `tool ${spec.name} has an undo but its result carries nothing for the undo to target: return the handle (an id), not "ok"`
    : undefined
