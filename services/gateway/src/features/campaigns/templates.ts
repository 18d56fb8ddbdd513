const PLACEHOLDER = /\{\{\s*([^{}\s]*)\s*\}\}/g

/** The variable names a message template refers to, in order of first use. */
export function placeholdersOf(template: string): string[] {
  return [...new Set([...template.matchAll(PLACEHOLDER)].map((match) => match[1] ?? ''))]
}

/** What a template writes itself, its placeholders left out. */
export function literalText(template: string): string {
  return template.replace(PLACEHOLDER, '')
}

/**
 * Replaces every `{{name}}` with its value; every placeholder must have one. `encode` writes each
 * value as it goes into the text (a URL's values are URL-encoded, so a value never adds a path, a
 * parameter or a host to it).
 */
export function fillTemplate(template: string, values: ReadonlyMap<string, string>, encode: (value: string) => string = (value) => value): string {
  return template.replace(PLACEHOLDER, (_, name: string) => {
    const value = values.get(name)
    if (value === undefined) throw new Error(`no value for placeholder ${name}`)
    return encode(value)
  })
}

/** Length as a person counts it: in Unicode code points, so an emoji or an accent is one. */
export function characterCount(text: string): number {
  let count = 0
  for (const _ of text) count++
  return count
}
