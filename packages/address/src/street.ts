import { isCarelesslyCased, isParticle, titleCaseWord } from './text.js'

/**
 * Spanish street-type abbreviations, at the start of the street line, and what the letter says
 * instead. `loose` ones are recognised before a space or a dot; `dotted` ones only with their
 * dot (or º), because without it they could be the start of a real name ("Po", "Bo").
 */
const streetTypes: Array<{ full: string; loose: string[]; dotted: string[] }> = [
  { full: 'Calle', loose: ['c/', 'cl', 'cll'], dotted: ['c'] },
  { full: 'Avenida', loose: ['avda', 'avd', 'av'], dotted: [] },
  { full: 'Plaza', loose: ['pza', 'plza', 'pl'], dotted: [] },
  { full: 'Paseo', loose: ['pº', 'p\\.º', 'pso'], dotted: ['po'] },
  { full: 'Carretera', loose: ['ctra', 'crta'], dotted: ['cra'] },
  { full: 'Ronda', loose: ['rda'], dotted: [] },
  { full: 'Travesía', loose: ['trav', 'trva'], dotted: ['tr'] },
  { full: 'Glorieta', loose: ['gta', 'glta'], dotted: [] },
  { full: 'Camino', loose: ['cmno'], dotted: ['cno'] },
  { full: 'Urbanización', loose: ['urb'], dotted: [] },
  { full: 'Barrio', loose: ['bº', 'b\\.º'], dotted: ['bo'] },
  { full: 'Pasaje', loose: ['pje', 'psje'], dotted: [] },
]

const patterns = streetTypes.map(({ full, loose, dotted }) => {
  const alternatives = [...loose.map((abbreviation) => `${abbreviation}(?:\\.\\s*|\\s+|(?<=/)\\s*)`), ...dotted.map((abbreviation) => `${abbreviation}\\.\\s*`)]
  return { full, pattern: new RegExp(`^(?:${alternatives.join('|')})`, 'iu') }
})

/** "C/ Mayor 3" → "Calle Mayor 3", "Avda. de la Constitución 5" → "Avenida de la Constitución 5". */
export function expandStreetType(street: string): string {
  for (const { full, pattern } of patterns) {
    const match = pattern.exec(street)
    if (match && street.length > match[0].length) return `${full} ${street.slice(match[0].length)}`
  }
  return street
}

/** Words after which a lone letter names a staircase, block, door or unit: "Esc. B", "Portal C", "Bajo A". */
const letterMarkers = new Set([
  'esc',
  'esc.',
  'escalera',
  'portal',
  'ptal.',
  'puerta',
  'pta',
  'pta.',
  'bloque',
  'bl',
  'bl.',
  'blq',
  'blq.',
  'bloq',
  'bloq.',
  'letra',
  'bajo',
  'bj',
  'bj.',
  'local',
  'nave',
])

/** Words that introduce the house number, as a digit would: "Carlos III s/n", "Pío XII nº 4". */
const numberMarkers = new Set(['nº', 'n.º', 'núm', 'núm.', 'num', 'num.', 's/n', 'km', 'km.'])

/** A valid roman numeral from 1 to 3999, in lower case: "xii" is, "mil", "cid" and "divino" are not. */
const romanNumeral = /^(?=[mdclxvi])m{0,3}(?:c[md]|d?c{0,3})(?:x[cl]|l?x{0,3})(?:i[xv]|v?i{0,3})$/u
/** A floor: "2º", "4ª", "1.º". */
const floor = /^\d+\.?[ºª]$/u
/** A road's code: "N-II", "A-6", "AP-7", "M-30". */
const roadCode = new RegExp(`^[a-z]{1,3}-(?:\\d+|${romanNumeral.source.slice(1, -1)})$`, 'u')
/** A number with its letter written on: "12b", "2ºa". */
const numberWithLetter = /^\d+\.?[ºª]?\p{L}$/u

/**
 * How the word at `index` of a lower-cased street line is written. A lone letter after a floor,
 * a staircase or a door word, or closing a house number ("3 A"), is a letter of the building and
 * stays a capital, even when it is a particle ("4º E", "2º A"). A roman numeral is only taken
 * for one after a name and before the house number, a comma or the end ("Alfonso XII 3", "Juan
 * Carlos I, 12"): between two words a lone I is the Catalan "and" ("Pau i Claris"), and a word
 * such as "mi" elsewhere is a word.
 */
function streetWord(words: readonly string[], index: number): string {
  const word = words[index]!
  const [, core = word, comma = ''] = /^(.*?)(,*)$/u.exec(word) ?? []
  const previous = words[index - 1]
  const next = words[index + 1]
  const closes = comma !== '' || next === undefined
  const lone = /^\p{L}$/u.test(core)
  if (roadCode.test(core) || numberWithLetter.test(core)) return word.toUpperCase()
  if (lone && previous !== undefined && (floor.test(previous) || letterMarkers.has(previous))) return word.toUpperCase()
  if (lone && previous !== undefined && /^\d+$/u.test(previous) && closes) return word.toUpperCase()
  const afterName = previous !== undefined && /^\p{L}+$/u.test(previous) && !isParticle(previous)
  const beforeNumber = closes || /^\d/u.test(next) || numberMarkers.has(next)
  if (romanNumeral.test(core) && afterName && beforeNumber) return word.toUpperCase()
  // Catalan and French elide "de" and "la" before a vowel: "Carrer d'Aragó", "Rue de l'Église".
  const elided = index > 0 ? /^([dl]['’])(\p{L}.*)$/u.exec(word) : null
  if (elided) return `${elided[1]}${titleCaseWord(elided[2]!, 0)}`
  return titleCaseWord(word, index)
}

/**
 * Fixes a street line typed all in capitals or all in small letters, as fixCasing does a name,
 * keeping the capitals of roman numerals, road codes and the letters of a staircase or door:
 * "CALLE ALFONSO XII 3, 2º A" → "Calle Alfonso XII 3, 2º A". Those capitals are written so
 * whatever the casing around them, so typed right they say nothing of how the rest was typed:
 * "calle alfonso XII 3, 2º A" is a line in small letters too. A street type already spelt out
 * ("Calle", "Avenida") is left out of the judgement as well, so that "Calle MAYOR 3" (a type
 * glued to a shouted name) is fixed and "Calle McDonald 3" is not.
 */
export function fixStreetCasing(street: string): string {
  const type = streetTypes.find(({ full }) => street.startsWith(`${full} `))?.full
  const typed = street.split(' ')
  const lower = street.toLowerCase().split(' ')
  const fixed = lower.map((word, index) => (index === 0 && type ? type : streetWord(lower, index)))
  const inCapitals = (word: string) => /\p{Lu}/u.test(word) && word === word.toUpperCase()
  const judged = typed.filter((word, index) => !(index === 0 && type) && !(inCapitals(word) && word === fixed[index]))
  return isCarelesslyCased(judged.join(' ')) ? fixed.join(' ') : street
}
