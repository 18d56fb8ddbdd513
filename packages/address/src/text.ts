/** Trims and turns every run of white space (tabs, newlines, double spaces) into one space. */
export function collapseSpaces(text: string): string {
  return text.replace(/\s+/gu, ' ').trim()
}

/** Lower case without accents, for comparing names a person may spell either way. */
export function foldForComparison(text: string): string {
  return collapseSpaces(text).normalize('NFD').replace(/\p{M}/gu, '').toLowerCase()
}

/** Words that stay lower case inside a Spanish name or street: "Calle de la Paz", "Puerto del Rosario". */
const particles = new Set(['de', 'del', 'la', 'las', 'los', 'el', 'y', 'e', 'i', 'a', 'al', 'en', 'o', 'd'])

function capitalize(word: string): string {
  return word.replace(/^(\p{Ll})/u, (letter) => letter.toUpperCase())
}

/**
 * Fixes text typed all in capitals or all in small letters ("MADRID", "calle mayor"), leaving
 * mixed case alone: a person who wrote "McDonald" or "DHL Express" meant it.
 */
export function fixCasing(text: string): string {
  const letters = text.replace(/[^\p{L}]/gu, '')
  const shouting = letters.length > 1 && letters === letters.toUpperCase()
  const whispering = letters.length > 0 && letters === letters.toLowerCase()
  if (!shouting && !whispering) return text
  return text
    .toLowerCase()
    .split(' ')
    .map((word, index) =>
      index > 0 && particles.has(word)
        ? word
        : word
            .split(/(?<=[-'’/.])/u)
            .map(capitalize)
            .join(''),
    )
    .join(' ')
}
