/**
 * Vitest's global set-up: the PostgreSQL the tests run against. With `EFFECT_SAGA_PG_URL` set (as
 * `.ci/run` does, after `.ci/postgres start`), that server; otherwise a throwaway one started here
 * by `.ci/postgres start` on a free loopback port, and stopped when the run ends. The workers find
 * its URL in `EFFECT_SAGA_PG_URL`. No Postgres case is ever skipped: without PostgreSQL's server
 * programs (Debian's `postgresql` package) the run fails, saying so.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"

const script = path.resolve(import.meta.dirname, "../../.ci/postgres")

/** A TCP port nothing listens on now, on loopback. */
const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo
      server.close(() => resolve(port))
    })
  })

export default async function setup(): Promise<(() => void) | undefined> {
  if (process.env.EFFECT_SAGA_PG_URL !== undefined) return undefined
  const env = {
    ...process.env,
    EFFECT_SAGA_PG_DIR: fs.mkdtempSync(path.join(os.tmpdir(), "effect-saga-test-pg-")),
    EFFECT_SAGA_PG_PORT: String(await freePort())
  }
  let url: string
  try {
    url = execFileSync("bash", [script, "start"], { env, encoding: "utf8" }).trim()
  } catch (error) {
    throw new Error(
      "the tests need PostgreSQL: install its server programs (Debian: `apt-get install postgresql`), " +
        `or set EFFECT_SAGA_PG_URL to a server of your own (.ci/postgres start failed: ${String(error)})`
    )
  }
  process.env.EFFECT_SAGA_PG_URL = url
  return () => {
    execFileSync("bash", [script, "stop"], { env, stdio: "ignore" })
  }
}
