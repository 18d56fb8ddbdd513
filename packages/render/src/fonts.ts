import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import type { FontName } from '@letters/contracts'

const require = createRequire(import.meta.url)

/** Each handwriting font's file in its font package: the latin subset covers Spanish (á, ñ, ¿, ¡). */
const fontFiles: Record<FontName, string> = {
  caveat: '@fontsource/caveat/files/caveat-latin-400-normal.woff',
  'dancing-script': '@fontsource/dancing-script/files/dancing-script-latin-400-normal.woff',
  'homemade-apple': '@fontsource/homemade-apple/files/homemade-apple-latin-400-normal.woff',
  'indie-flower': '@fontsource/indie-flower/files/indie-flower-latin-400-normal.woff',
  kalam: '@fontsource/kalam/files/kalam-latin-400-normal.woff',
}

const loaded = new Map<FontName, Buffer>()

/** The font file's bytes, read once per process. */
export function fontData(name: FontName): Buffer {
  let data = loaded.get(name)
  if (!data) {
    data = readFileSync(require.resolve(fontFiles[name]))
    loaded.set(name, data)
  }
  return data
}
