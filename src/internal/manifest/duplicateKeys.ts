/**
 * `JSON.parse` keeps the last of two equal keys without a word; a manifest with two bindings of one
 * name is refused instead. This scanner walks JSON text (already known to parse) and answers the
 * path of the first key that repeats in its object.
 */

export const firstDuplicateKey = (text: string): ReadonlyArray<string | number> | undefined => {
  let index = 0
  const skipSpace = () => {
    while (index < text.length && " \t\n\r".includes(text[index]!)) index++
  }
  const readString = (): string => {
    const start = index
    index++
    while (text[index] !== '"') index += text[index] === "\\" ? 2 : 1
    index++
    return JSON.parse(text.slice(start, index)) as string
  }
  const value = (path: ReadonlyArray<string | number>): ReadonlyArray<string | number> | undefined => {
    skipSpace()
    const char = text[index]
    if (char === "{") return object(path)
    if (char === "[") return array(path)
    if (char === '"') {
      readString()
      return undefined
    }
    while (index < text.length && !",}] \t\n\r".includes(text[index]!)) index++
    return undefined
  }
  const object = (path: ReadonlyArray<string | number>) => {
    const seen = new Set<string>()
    index++
    skipSpace()
    if (text[index] === "}") {
      index++
      return undefined
    }
    for (;;) {
      skipSpace()
      const key = readString()
      if (seen.has(key)) return [...path, key]
      seen.add(key)
      skipSpace()
      index++ // the colon
      const found = value([...path, key])
      if (found !== undefined) return found
      skipSpace()
      if (text[index++] === "}") return undefined
    }
  }
  const array = (path: ReadonlyArray<string | number>) => {
    index++
    skipSpace()
    if (text[index] === "]") {
      index++
      return undefined
    }
    for (let position = 0; ; position++) {
      const found = value([...path, position])
      if (found !== undefined) return found
      skipSpace()
      if (text[index++] === "]") return undefined
    }
  }
  return value([])
}

/** How deep a manifest's JSON may nest: the checks after `JSON.parse` walk it recursively. */
export const MAX_NESTING = 64

/** How deeply arrays and objects nest in JSON text (already known to parse), without recursion. */
export const nestingOf = (text: string): number => {
  let depth = 0
  let deepest = 0
  for (let index = 0; index < text.length; index++) {
    const char = text[index]
    if (char === '"') {
      index++
      while (text[index] !== '"') index += text[index] === "\\" ? 2 : 1
    } else if (char === "{" || char === "[") {
      depth++
      if (depth > deepest) deepest = depth
    } else if (char === "}" || char === "]") {
      depth--
    }
  }
  return deepest
}

/**
 * Every string value `key` has at the top level of JSON text (already known to parse), in order:
 * where the object repeats the key, `JSON.parse` keeps only the last.
 */
export const topLevelStrings = (text: string, key: string): ReadonlyArray<string> => {
  const found: Array<string> = []
  let depth = 0
  let atKey = false
  let lastKey: string | undefined
  for (let index = 0; index < text.length; index++) {
    const char = text[index]
    if (char === '"') {
      const start = index++
      while (text[index] !== '"') index += text[index] === "\\" ? 2 : 1
      const string = JSON.parse(text.slice(start, index + 1)) as string
      if (depth !== 1) continue
      if (atKey) lastKey = string
      else if (lastKey === key) found.push(string)
      atKey = false
    } else if (char === "{" || char === "[") {
      depth++
      atKey = depth === 1 && char === "{"
    } else if (char === "}" || char === "]") {
      depth--
    } else if (char === "," && depth === 1) {
      atKey = true
    }
  }
  return found
}
