/**
 * Loading an optional peer dependency: a package that only one entry point needs, so that a user
 * who imports that entry without it gets one line naming what to install, not a resolution stack.
 */

/** The entry that needs the packages, and the arguments of the `npm install` that adds them. */
export interface Peer {
  readonly entry: string
  readonly install: string
}

/** Whether `error` says a module could not be found (and not that it failed while it loaded). */
const isNotFound = (error: unknown): boolean =>
  typeof error === "object" &&
  error !== null &&
  "code" in error &&
  (error.code === "ERR_MODULE_NOT_FOUND" || error.code === "MODULE_NOT_FOUND")

/** The one line a missing peer is reported with: no frames, no cause (its stack is its message). */
const missing = (peer: Peer): Error => {
  const error = new Error(`${peer.entry} needs packages that are not installed: npm install ${peer.install}`)
  error.name = "MissingPeerDependency"
  error.stack = `${error.name}: ${error.message}`
  return error
}

/**
 * Imports a peer, failing with `missing(peer)` when it is not installed; any other failure of the
 * import (a broken install) is left as it is.
 */
export const load = async <A>(peer: Peer, importing: () => Promise<A>): Promise<A> => {
  try {
    return await importing()
  } catch (error) {
    throw isNotFound(error) ? missing(peer) : error
  }
}
