/**
 * The console's HTML: escaping, and the page every view is drawn in (navigation, the notice of the
 * last command, a stylesheet that fits a phone and a desktop). Plain HTML, no script, nothing
 * fetched from elsewhere.
 */

import { printableButLineEnds } from "../../util/printable.js"

const entities: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }

const entity = (text: string): string => text.replace(/[&<>"']/g, (char) => entities[char]!)

/**
 * Text as a page shows it: HTML-escaped, and each character it would act on instead of showing
 * written as its escape (`\u202e`), as the CLI shows it: a bidi control (which reorders what
 * follows: a payee's IBAN read backwards), a line or paragraph separator, a control character but a
 * tab or a line end, a lone surrogate.
 *
 * @since 0.2.0
 * @category html
 */
export const escape = (text: string): string => entity(printableButLineEnds(text))

/**
 * Text as an attribute's value that a form sends back or a link follows (a saga id, a search): only
 * HTML-escaped, so that it stays exactly the text.
 *
 * @since 0.5.0
 * @category html
 */
export const attribute = (text: string): string => entity(text)

/**
 * Text as (part of) an element's `id`, as a page shows text (`escape`): an id holds no whitespace,
 * and `aria-labelledby` splits its value at whitespace into ids, so each whitespace character is
 * written as its `%XX` first, and so are `%` and `\` (so that two texts never meet: a real U+2028 is
 * shown as `\u2028`, as the six characters are). A saga or step id without them, or without a
 * character `escape` shows as its escape, is unchanged.
 *
 * @since 0.5.0
 * @category html
 */
export const idToken = (text: string): string =>
  escape(
    text.replace(/[\t\n\f\r %\\]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0")}`)
  )

/**
 * The kind of a notice: what the last command came to.
 *
 * @since 0.2.0
 * @category models
 */
export type NoticeKind = "ok" | "conflict" | "forbidden" | "error"

/**
 * A notice to show above a page.
 *
 * @since 0.2.0
 * @category models
 */
export interface Notice {
  readonly kind: NoticeKind
  readonly text: string
}

const style = `
:root { color-scheme: light; --ink: #1d2330; --muted: #5b6474; --line: #d7dbe3; --accent: #1f5fbf; --bad: #b3261e; --ok: #1b7a3d; --warn: #8a5a00; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: #f6f7f9; }
a { color: var(--accent); }
a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible, textarea:focus-visible { outline: 3px solid #f2b705; outline-offset: 2px; }
.skip { position: absolute; left: -999px; } .skip:focus { left: 8px; top: 8px; background: #fff; padding: 4px 8px; }
header { background: var(--ink); color: #fff; padding: 10px 16px; display: flex; flex-wrap: wrap; gap: 8px 20px; align-items: center; }
header strong { font-size: 17px; margin-right: 8px; }
header a { color: #fff; text-decoration: none; padding: 4px 2px; border-bottom: 2px solid transparent; }
header a[aria-current="page"] { border-bottom-color: #f2b705; }
main { max-width: 1180px; margin: 0 auto; padding: 16px; }
h1 { font-size: 22px; margin: 8px 0 16px; } h2 { font-size: 18px; margin: 24px 0 8px; }
h1, h2, p, a { overflow-wrap: anywhere; }
.notice { padding: 10px 14px; border-radius: 6px; margin-bottom: 16px; border: 1px solid; }
.notice.ok { background: #e8f5ec; border-color: var(--ok); } .notice.conflict { background: #fff4e0; border-color: var(--warn); }
.notice.forbidden, .notice.error { background: #fdecea; border-color: var(--bad); }
.banner { background: var(--bad); color: #fff; padding: 12px 16px; border-radius: 6px; margin-bottom: 16px; font-weight: 600; }
.card { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 14px 16px; margin-bottom: 14px; }
.card h2 { margin-top: 0; }
.meta { display: grid; grid-template-columns: max-content 1fr; gap: 2px 14px; margin: 0 0 10px; }
.meta dt { color: var(--muted); } .meta dd { margin: 0; overflow-wrap: anywhere; }
pre { background: #f0f2f5; padding: 10px; border-radius: 6px; overflow: auto; max-height: 320px; margin: 6px 0 10px; }
code { overflow-wrap: anywhere; }
form.actions { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; margin: 6px 0; }
input[type=text], input[type=password], input[type=search], select, textarea { font: inherit; padding: 6px 8px; border: 1px solid var(--line); border-radius: 5px; min-width: 0; }
input[type=text], input[type=password] { flex: 1 1 220px; }
button { font: inherit; padding: 6px 14px; border-radius: 5px; border: 1px solid var(--accent); background: var(--accent); color: #fff; cursor: pointer; }
header form { margin: 0; } button.signout { padding: 3px 10px; background: transparent; border-color: #cfd5df; }
button.secondary { background: #fff; color: var(--bad); border-color: var(--bad); }
.table { overflow-x: auto; background: #fff; border: 1px solid var(--line); border-radius: 8px; }
table { border-collapse: collapse; width: 100%; } th, td { text-align: left; padding: 7px 10px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { color: var(--muted); font-weight: 600; font-size: 13px; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 13px; background: #e9ecf1; }
.badge.compensation_failed, .badge.needs_attention, .badge.tampered, .badge.stuck, .badge.not_undone { background: #fdecea; color: var(--bad); }
.badge.awaiting_approval { background: #fff4e0; color: var(--warn); } .badge.completed, .badge.compensated { background: #e8f5ec; color: var(--ok); }
.diagram { overflow-x: auto; background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 8px; }
.muted { color: var(--muted); }
@media (max-width: 600px) { main { padding: 10px; } .meta { grid-template-columns: 1fr; } .meta dt { margin-top: 4px; } }
`

const nav = [
  ["inbox", "/console", "Approval inbox"],
  ["sagas", "/console/sagas", "Sagas"],
  ["docs", "/api/docs", "API docs"]
] as const

/**
 * A whole page: its title, which navigation entry is current, the notice if any, and its body (HTML).
 *
 * @since 0.2.0
 * @category html
 */
export const page = (options: {
  readonly title: string
  readonly current: "inbox" | "sagas" | "login" | "saga"
  readonly notice?: Notice | undefined
  readonly principal?: string | undefined
  readonly body: string
}): string => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(options.title)} · effect-saga</title>
<style>${style}</style>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header><strong>effect-saga</strong>
<nav aria-label="Console">${nav
  .map(([key, href, label]) => `<a href="${href}"${key === options.current ? ' aria-current="page"' : ""}>${label}</a>`)
  .join(" ")}</nav>
${
  options.principal === undefined
    ? ""
    : `<span class="muted" style="margin-left:auto;color:#cfd5df">signed in as ${escape(options.principal)}</span>
<form method="post" action="/console/logout"><button type="submit" class="signout">Sign out</button></form>`
}
</header>
<main id="main">
${options.notice === undefined ? "" : `<div class="notice ${options.notice.kind}" role="status">${escape(options.notice.text)}</div>`}
${options.body}
</main>
</body>
</html>`

/**
 * A status as a badge.
 *
 * @since 0.2.0
 * @category html
 */
export const badge = (status: string): string =>
  `<span class="badge ${escape(status)}">${escape(status.replaceAll("_", " "))}</span>`

/**
 * Hidden form fields.
 *
 * @since 0.2.0
 * @category html
 */
export const hidden = (fields: Record<string, string | number>): string =>
  Object.entries(fields)
    .map(([name, value]) => `<input type="hidden" name="${attribute(name)}" value="${attribute(String(value))}">`)
    .join("")
