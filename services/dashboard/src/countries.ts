/**
 * The `country` codes the API takes come from the contracts' one list; their Spanish names come
 * from the browser (Intl.DisplayNames) rather than from a list shipped in the bundle.
 */
import { COUNTRY_CODES, type CountryCode } from '@letters/contracts/countries'

const names = new Intl.DisplayNames(['es-ES'], { type: 'region' })

export const countryName = (code: string) => names.of(code.toUpperCase()) ?? code

/** Every country as a select shows it: Spain first (most letters go there), then the rest by name. */
export const countries: { code: CountryCode; name: string }[] = (() => {
  const all = COUNTRY_CODES.map((code) => ({ code, name: countryName(code) }))
  const rest = all.filter((country) => country.code !== 'ES').sort((a, b) => a.name.localeCompare(b.name, 'es'))
  return [{ code: 'ES' as const, name: countryName('ES') }, ...rest]
})()

const folded = (text: string) => text.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase().trim()

const byName = new Map(countries.map((country) => [folded(country.name), country.code]))
byName.set('espana', 'ES')

/**
 * A spreadsheet's country cell as the API wants it: a 2-letter code stays, a Spanish country name
 * ("España", "Francia") becomes its code; anything else is left for the API to judge.
 */
export function countryCode(cell: string): string {
  const value = cell.trim()
  if (/^[A-Za-z]{2}$/.test(value)) return value.toUpperCase()
  return byName.get(folded(value)) ?? value
}
