/**
 * A database URL as messages may show it: without its password, wherever the driver reads one
 * (`postgres://user:secret@host/db`, or `?password=secret` in the query, which `pg` takes too).
 */

/** The query parameters a PostgreSQL URL may carry a secret in. */
const SECRET_PARAMETERS = new Set(["password", "sslpassword"])

/** `url` with every password replaced by `***`; `unreadable` when it is not a URL at all. */
export const withoutSecrets = (url: string, unreadable: string): string => {
  try {
    const parsed = new URL(url)
    if (parsed.password !== "") parsed.password = "***"
    for (const name of [...parsed.searchParams.keys()]) {
      if (SECRET_PARAMETERS.has(name.toLowerCase())) parsed.searchParams.set(name, "***")
    }
    return parsed.toString()
  } catch {
    return unreadable
  }
}
