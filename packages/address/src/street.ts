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
