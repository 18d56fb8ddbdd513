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

/** Whether a lower-case word is one of the particles that stay lower case after the first word. */
export function isParticle(word: string): boolean {
  return particles.has(word)
}

function capitalize(word: string): string {
  return word.replace(/^(\p{Ll})/u, (letter) => letter.toUpperCase())
}

/**
 * Whether text was typed all in capitals or all in small letters ("MADRID", "calle mayor"): the
 * only casing worth fixing. Mixed case is left alone: a person who wrote "McDonald" or
 * "DHL Express" meant it.
 */
export function isCarelesslyCased(text: string): boolean {
  const letters = text.replace(/[^\p{L}]/gu, '')
  const shouting = letters.length > 1 && letters === letters.toUpperCase()
  const whispering = letters.length > 0 && letters === letters.toLowerCase()
  return shouting || whispering
}

/**
 * A lower-case word as a name writes it: a particle stays lower case after the first word, any
 * other word takes a capital, and so does each part after a hyphen, apostrophe, slash or dot
 * ("Pérez-Reverte", "O'Brien").
 */
export function titleCaseWord(word: string, index: number): string {
  return index > 0 && particles.has(word)
    ? word
    : word
        .split(/(?<=[-'’/.])/u)
        .map(capitalize)
        .join('')
}

/** Fixes text typed all in capitals or all in small letters ("MADRID", "calle mayor"), leaving mixed case alone. */
export function fixCasing(text: string): string {
  if (!isCarelesslyCased(text)) return text
  return text
    .toLowerCase()
    .split(' ')
    .map((word, index) => titleCaseWord(word, index))
    .join(' ')
}
