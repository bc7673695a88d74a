// The docs site's diagrams: the plugin (typedoc-plugin.mjs) bundles this file with mermaid from
// node_modules into `assets/diagrams.js` (one classic script, so that pages opened from the disk
// work too) and loads it on the pages that have a diagram. Nothing comes from a CDN.
import mermaid from "mermaid"

const dark = document.documentElement.dataset.theme === "dark" || matchMedia("(prefers-color-scheme: dark)").matches
mermaid.initialize({ startOnLoad: false, theme: dark ? "dark" : "default", securityLevel: "strict" })
mermaid.run({ querySelector: "pre.mermaid" })
