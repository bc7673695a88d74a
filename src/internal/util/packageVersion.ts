/**
 * The version of effect-saga, as its `package.json` says: what the CLI's `--version` prints and the
 * HTTP API's OpenAPI document gives as `info.version`.
 *
 * @since 0.5.0
 */
export const packageVersion = "0.5.0"
