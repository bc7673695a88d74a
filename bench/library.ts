/**
 * effect-saga as the bench measures it: the built library (`dist/`, what `npm run build` compiles
 * and what users import), not its TypeScript source. tsx, which runs the bench, compiles with
 * esbuild's `keepNames`: every named function a function makes is wrapped in a call that sets its
 * `name`, which cost the engine ≈ 30 % more instructions a saga (docs/performance.md, seventh
 * pass). `npm run bench` builds first; run alone, a bench file refuses a `dist/` older than `src/`.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))

/** The newest modification time of the files under `directory`, in ms. */
const newestUnder = (directory: string): number => {
  let newest = 0
  for (const entry of Fs.readdirSync(directory, { withFileTypes: true })) {
    const path = Path.join(directory, entry.name)
    newest = Math.max(newest, entry.isDirectory() ? newestUnder(path) : Fs.statSync(path).mtimeMs)
  }
  return newest
}

const built = Path.join(root, "dist", "index.js")
if (!Fs.existsSync(built) || Fs.statSync(built).mtimeMs < newestUnder(Path.join(root, "src"))) {
  throw new Error("the bench measures the built library, and dist/ is missing or older than src/: run `npm run build`")
}

export * from "../dist/index.js"
export * as Postgres from "../dist/Postgres.js"
