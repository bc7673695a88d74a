import * as Arr from "effect/Array"
import * as ParseResult from "effect/ParseResult"
import * as SchemaAST from "effect/SchemaAST"

/**
 * What a reason shows where a decoding error met a value: `Inspectable.formatUnknown` prints it
 * through its `toString`, and a message annotation that quotes the issue's `actual` gets it too.
 */
const placeholder: object = Object.freeze({ toString: () => "<value>" })

/** A key of the value that its schema does not declare (a `Record`'s key), as a path shows it. */
const maskedKey = "<key>"

/** A JSON string literal, as a message made while decoding quotes a value it met. */
const quoted = /"(?:[^"\\]|\\.)*"/g

/**
 * A message made while decoding (a transformation's `Unable to decode "4111…" into a number`, a
 * filter's own words), its quotes masked: it was written with the value in hand.
 */
export const withoutQuotes = (text: string): string => text.replace(quoted, "<value>")

const maskedMessage = (message: string | undefined) => (message === undefined ? undefined : withoutQuotes(message))

/**
 * Whether a path's key is the schema's word: an index, a field its struct declares, a union's
 * discriminant; not a key the value brought (a `Record`'s, or one met with no schema around it).
 */
const isSchemaKey = (key: PropertyKey, parent: SchemaAST.AST | undefined): boolean =>
  typeof key !== "string" ||
  (parent !== undefined &&
    (!SchemaAST.isTypeLiteral(parent) || parent.propertySignatures.some((signature) => signature.name === key)))

const maskedPath = (path: ParseResult.Path, parent: SchemaAST.AST | undefined): ParseResult.Path => {
  const shown = (key: PropertyKey) => (isSchemaKey(key, parent) ? key : maskedKey)
  return isKey(path) ? shown(path) : Arr.map(path, shown)
}

const isKey = (path: ParseResult.Path): path is PropertyKey => !Array.isArray(path)

const isIssue = (issues: ParseResult.SingleOrNonEmpty<ParseResult.ParseIssue>): issues is ParseResult.ParseIssue =>
  !Array.isArray(issues)

/**
 * The issue with every value it met replaced by the placeholder: the values it holds (`actual`, a
 * composite's partial `output`), the keys a path takes from the value, the quotes in the messages
 * written while decoding. What the schema says (its descriptions, literals, brands, refinements,
 * declared fields) is left as it is.
 */
const masked = (issue: ParseResult.ParseIssue, parent: SchemaAST.AST | undefined): ParseResult.ParseIssue => {
  switch (issue._tag) {
    case "Type":
      return new ParseResult.Type(issue.ast, placeholder, maskedMessage(issue.message))
    case "Forbidden":
      return new ParseResult.Forbidden(issue.ast, placeholder, maskedMessage(issue.message))
    case "Unexpected":
      // Its message is Effect's, from the schema: `is unexpected, expected: "amount"` (its keys or indexes).
      return new ParseResult.Unexpected(placeholder, issue.message)
    case "Missing":
      return new ParseResult.Missing(issue.ast, maskedMessage(issue.message))
    case "Pointer":
      return new ParseResult.Pointer(maskedPath(issue.path, parent), placeholder, masked(issue.issue, parent))
    case "Refinement":
      return new ParseResult.Refinement(issue.ast, placeholder, issue.kind, masked(issue.issue, issue.ast))
    case "Transformation":
      return new ParseResult.Transformation(issue.ast, placeholder, issue.kind, masked(issue.issue, issue.ast))
    case "Composite": {
      const inner = issue.issues
      const issues = isIssue(inner) ? masked(inner, issue.ast) : Arr.map(inner, (one) => masked(one, issue.ast))
      return new ParseResult.Composite(issue.ast, placeholder, issues)
    }
  }
}

/**
 * A decoding error about a journaled value, as reports, logs and spans may carry it: where, and what
 * the schema expected in the schema's own words (`Expected "a" | "b"`, `length(3) & Brand<"X">`,
 * `["card"]`), never the value found (`, actual …` is cut; `Unable to decode <value> into a number`;
 * a `Record`'s key reads `["<key>"]`). Formatted as `TreeFormatter` formats it.
 */
export const withoutValues = (error: ParseResult.ParseError): string =>
  ParseResult.TreeFormatter.formatIssueSync(masked(error.issue, undefined)).replaceAll(", actual <value>", "")
