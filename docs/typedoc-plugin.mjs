// @ts-check
/**
 * The documentation site's TypeDoc plugin (typedoc.json loads it): TypeDoc reads the sources as
 * they are written here, in the conventions of Effect's own packages, with no TypeDoc tag in them.
 *
 * - A module's doc is the first doc comment of its file, as `@effect/docgen` reads it (TypeDoc
 *   wants a `@module` tag): it becomes the doc of the entry module and of `export * as X`.
 * - Entry modules are named by package.json's `exports`: `effect-saga`, `effect-saga/testing`, …
 * - An interface or type alias declared under `src/internal/` is shown inline where the public
 *   modules name it (`export type RunOptions = internal.RunOptions` shows RunOptions' members).
 * - The index page has one heading, the package's name: docs/index.md's `# heading` is left out.
 * - A guide's title is its first `# heading`, and its page is named after its file
 *   (`documents/cli.html`: the `kind-guides` router, which typedoc.json selects).
 * - A heading's anchor keeps its code, as GitHub's does (`## Durability: \`synchronous\`` is
 *   `#durability-synchronous`), so that links between guides work on GitHub and in the site alike.
 * - Every `docs/*.md` must be in the site (the readme or a project document), or the build warns.
 * - A ```mermaid block is drawn in the page: it is written as `<pre class="mermaid">`, and the pages
 *   that have one load `assets/diagrams.js`, docs/diagrams.mjs bundled with mermaid from
 *   node_modules by esbuild (nothing from a CDN). `test/docs-site.test.ts` checks it in Chromium.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as esbuild from "esbuild"
import {
  Application,
  Comment,
  Context,
  Converter,
  JSX,
  KindRouter,
  ReflectionKind,
  RendererEvent,
  TypeScript as ts
} from "typedoc"

const root = fileURLToPath(new URL("..", import.meta.url))
const internalDir = path.join(root, "src", "internal") + path.sep
const pkg = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8"))

/** `src/X.ts` → the name it is imported by, from package.json's `exports` (`./dist/X.js`). */
const entryNames = new Map(
  Object.entries(pkg.exports ?? {}).map(([subpath, target]) => {
    const built = typeof target === "string" ? target : target.default
    const source = path.join(root, built.replace(/^\.\/dist\//, "src/").replace(/\.js$/, ".ts"))
    return [source, subpath === "." ? pkg.name : `${pkg.name}/${subpath.slice(2)}`]
  })
)

/** @param {import("typedoc").Comment | undefined} comment */
const hasSummary = (comment) => comment?.summary.some((part) => part.text.trim() !== "") ?? false

/** @param {ts.Symbol} symbol */
const isInternalShape = (symbol) => {
  const declarations = symbol.declarations ?? []
  return (
    declarations.length > 0 &&
    declarations.every(
      (declaration) =>
        (ts.isInterfaceDeclaration(declaration) || ts.isTypeAliasDeclaration(declaration)) &&
        path.resolve(declaration.getSourceFile().fileName).startsWith(internalDir)
    )
  )
}

/**
 * TypeDoc makes a heading's anchor from the text tokens in it and skips code spans, so that
 * `Durability: \`synchronous\`` would be `#durability`. A code span given a text child of its own code
 * is read by TypeDoc; markdown-it renders a code span from its content and ignores the child.
 *
 * @param {any} parser the markdown-it instance
 */
const anchorsKeepCode = (parser) => {
  parser.core.ruler.push("anchors_keep_code", (/** @type {any} */ state) => {
    state.tokens.forEach((/** @type {any} */ token, /** @type {number} */ index) => {
      if (token.type !== "inline" || state.tokens[index - 1]?.type !== "heading_open") return
      for (const child of token.children ?? []) {
        if (child.type !== "code_inline") continue
        const text = new state.Token("text", "", 0)
        text.content = child.content
        child.children = [text]
      }
    })
  })
}

/**
 * A ```mermaid fence becomes `<pre class="mermaid">` holding its source, which mermaid draws.
 *
 * @param {any} parser the markdown-it instance
 */
const mermaidFences = (parser) => {
  const fence = parser.renderer.rules.fence
  parser.renderer.rules.fence = (
    /** @type {any[]} */ tokens,
    /** @type {number} */ index,
    /** @type {any} */ options,
    /** @type {any} */ env,
    /** @type {any} */ self
  ) => {
    const token = tokens[index]
    if (token.info.trim() !== "mermaid") return fence(tokens, index, options, env, self)
    return `<pre class="mermaid">${parser.utils.escapeHtml(token.content)}</pre>\n`
  }
}

/** @param {import("typedoc").Reflection} model */
const hasDiagram = (model) =>
  model.isDocument() && model.content.some((part) => part.kind === "code" && part.text.startsWith("```mermaid"))

/** The bundle the pages with a diagram load: docs/diagrams.mjs and mermaid, as one classic script. */
const diagramsScript = "assets/diagrams.js"

/** @param {RendererEvent} event */
const bundleDiagrams = async (event) => {
  await esbuild.build({
    entryPoints: [path.join(root, "docs", "diagrams.mjs")],
    outfile: path.join(event.outputDirectory, diagramsScript),
    bundle: true,
    minify: true,
    format: "iife",
    target: "es2020",
    logLevel: "warning"
  })
}

/** TypeDoc's `kind` router, but a guide's page is named after its file, not its title. */
class GuideRouter extends KindRouter {
  /** @param {import("typedoc").Reflection} reflection */
  getIdealBaseName(reflection) {
    const file = reflection.isDocument() ? reflection.project.files.getReflectionPath(reflection) : undefined
    return file === undefined ? super.getIdealBaseName(reflection) : `documents/${path.basename(file, ".md")}`
  }
}

/** @param {import("typedoc").Application} app */
export function load(app) {
  app.renderer.defineRouter("kind-guides", GuideRouter)
  app.on(Application.EVENT_BOOTSTRAP_END, () => {
    const loader = app.options.getValue("markdownItLoader")
    app.options.setValue("markdownItLoader", (/** @type {any} */ parser) => {
      loader(parser)
      anchorsKeepCode(parser)
      mermaidFences(parser)
    })
  })
  app.renderer.hooks.on("body.end", (context) =>
    hasDiagram(context.page.model)
      ? JSX.createElement("script", { defer: true, src: context.relativeURL(diagramsScript) })
      : null
  )
  app.renderer.on(RendererEvent.BEGIN, () => {
    app.renderer.postRenderAsyncJobs.push(bundleDiagrams)
  })

  const shouldInline = Context.prototype.shouldInline
  Context.prototype.shouldInline = function (symbol, name) {
    return shouldInline.call(this, symbol, name) || isInternalShape(this.resolveAliasedSymbol(symbol))
  }

  app.converter.on(Converter.EVENT_CREATE_DECLARATION, (context, reflection) => {
    if (!reflection.kindOf(ReflectionKind.SomeModule)) return
    const file = context.getSymbolFromReflection(reflection)?.declarations?.find(ts.isSourceFile)
    if (file === undefined) return
    const entryName = entryNames.get(path.resolve(file.fileName))
    if (entryName !== undefined && reflection.kindOf(ReflectionKind.Module)) reflection.name = entryName
    if (hasSummary(reflection.comment)) return
    // The file's comment is the doc comment before its first import (an export's comment is the export's).
    const first = file.statements[0]
    const fileComment =
      first !== undefined && ts.isImportDeclaration(first) ? context.getNodeComment(first, false) : undefined
    const comment = fileComment?.clone() ?? reflection.comment?.clone() ?? new Comment()
    for (const tag of reflection.comment?.blockTags ?? []) {
      if (comment.getTag(tag.tag) === undefined) comment.blockTags.push(tag)
    }
    if (!hasSummary(comment) && entryName === pkg.name) comment.summary = [{ kind: "text", text: pkg.description }]
    if (hasSummary(comment) || comment.blockTags.length > 0) reflection.comment = comment
  })

  app.converter.on(Converter.EVENT_CREATE_DOCUMENT, (_context, document) => {
    const heading = document.content
      .map((part) => part.text)
      .join("")
      .match(/^# (.+)$/m)
    if (heading?.[1] !== undefined) document.name = heading[1].replaceAll("`", "")
  })

  // The index page is titled with the package's name: the readme's own `# heading` would be a second one.
  app.converter.on(Converter.EVENT_RESOLVE_END, (context) => {
    const first = context.project.readme?.[0]
    if (first?.kind === "text") first.text = first.text.replace(/^# .+\n+/, "")
  })

  app.converter.on(Converter.EVENT_END, () => {
    const inSite = new Set(
      [app.options.getValue("readme"), ...app.options.getValue("projectDocuments")].map((file) => path.resolve(file))
    )
    const docs = path.join(root, "docs")
    for (const file of fs.readdirSync(docs).filter((name) => name.endsWith(".md"))) {
      if (!inSite.has(path.join(docs, file))) {
        app.logger.warn(`docs/${file} is not in the site: add it to projectDocuments in typedoc.json`)
      }
    }
  })
}
