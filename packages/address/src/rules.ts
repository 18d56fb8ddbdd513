import { COUNTRY_CODES } from '@letters/contracts'
import { postcodeValidator, postcodeValidatorExistsForCountry } from 'postcode-validator'

/**
 * The address rules a request is checked against before anything is charged; the address
 * worker's normalization applies the same ones (normalize.ts). Callers pad a postal code
 * (padPostalCode) before they judge it.
 */

const countryCodes = new Set<string>(COUNTRY_CODES)

/** An assigned ISO 3166-1 alpha-2 code (contracts' list), in any case. */
export function isAssignedCountry(code: string): boolean {
  return countryCodes.has(code.toUpperCase())
}

/**
 * Countries whose postal codes are all digits of one length and may start with 0: the length
 * they have. A spreadsheet that took one of them for a number ate its leading zeros.
 */
const postalCodeLengths = new Map([
  ['ES', 5],
  ['FR', 5],
  ['DE', 5],
  ['IT', 5],
  ['US', 5],
])

/**
 * The postal code with the leading zeros a spreadsheet ate put back ("8001" → "08001" in Spain),
 * so that it is judged as the post reads it; any other code is returned as it came, so a result
 * that differs from `zip` is one that was short.
 */
export function padPostalCode(zip: string, country: string): string {
  const length = postalCodeLengths.get(country.toUpperCase())
  const digits = zip.trim()
  return length && /^\d+$/.test(digits) && digits.length < length ? digits.padStart(length, '0') : zip
}

/**
 * Whether `zip` has the postal-code format of `country`, where the format is known. Spain's
 * codes also start with a province number from 01 to 52.
 */
export function isPostalCodeOf(zip: string, country: string): boolean {
  const code = country.toUpperCase()
  if (!postcodeValidatorExistsForCountry(code)) return true
  if (!postcodeValidator(zip.trim(), code)) return false
  if (code === 'ES') {
    const province = Number(zip.trim().slice(0, 2))
    return province >= 1 && province <= 52
  }
  return true
}
