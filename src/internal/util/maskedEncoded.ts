/**
 * An encoded value (JSON, as a schema encoded it) with its data masked and its schema's own words
 * kept: the names of a struct's fields and the literals it fixes (a tagged error's `_tag`, a
 * `Schema.Literal`) are the tool's code, not data a receipt can be in. Masking them would leave a
 * value that no longer decodes (a receipt `t` would turn `"_tag": "Declined"` into nothing the
 * schema knows).
 */
import * as Schema from "effect/Schema"
import * as AST from "effect/SchemaAST"
import { maskedTexts } from "./masking.js"

type Mask = (text: string) => string

/**
 * `encoded` (what `schema` encoded) with every text that is data masked: a string, a key of a
 * record; not a struct's field names nor a literal. What the schema does not describe (a
 * `Schema.Unknown`, a declaration) is masked whole, keys included.
 */
export const maskedEncoded = (schema: Schema.Schema.Any, encoded: unknown, mask: Mask): unknown =>
  walk(AST.encodedAST(schema.ast), encoded, mask)

const walk = (ast: AST.AST, value: unknown, mask: Mask): unknown => {
  switch (ast._tag) {
    case "Literal":
    case "Enums":
      return value
    case "Refinement":
    case "Transformation":
      return walk(ast.from, value, mask)
    case "Suspend":
      return walk(ast.f(), value, mask)
    case "Union": {
      const member = ast.types.find((type) => Schema.is(Schema.make(type))(value))
      return member === undefined ? maskedTexts(value, mask) : walk(member, value, mask)
    }
    case "TupleType":
      return Array.isArray(value)
        ? value.map((item, index) => walkItem(ast, value, index, item, mask))
        : maskedTexts(value, mask)
    case "TypeLiteral":
      return typeof value === "object" && value !== null && !Array.isArray(value)
        ? Object.fromEntries(Object.entries(value).map(([key, item]) => walkField(ast, key, item, mask)))
        : maskedTexts(value, mask)
    default:
      return maskedTexts(value, mask)
  }
}

/** An item of a tuple or an array, by the element, the rest or the trailing element that describes it. */
const walkItem = (ast: AST.TupleType, items: ReadonlyArray<unknown>, index: number, item: unknown, mask: Mask) => {
  if (index < ast.elements.length) return walk(ast.elements[index]!.type, item, mask)
  const [rest, ...trailing] = ast.rest
  if (rest === undefined) return maskedTexts(item, mask)
  const fromEnd = items.length - index
  return fromEnd <= trailing.length
    ? walk(trailing[trailing.length - fromEnd]!.type, item, mask)
    : walk(rest.type, item, mask)
}

/** A field of a struct (its name kept) or of a record (its key masked). */
const walkField = (ast: AST.TypeLiteral, key: string, item: unknown, mask: Mask): readonly [string, unknown] => {
  const field = ast.propertySignatures.find((signature) => signature.name === key)
  if (field !== undefined) return [key, walk(field.type, item, mask)]
  const index = ast.indexSignatures[0]
  return [mask(key), index === undefined ? maskedTexts(item, mask) : walk(index.type, item, mask)]
}
