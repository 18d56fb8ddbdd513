import countries from 'i18n-iso-countries'
import { postcodeValidator, postcodeValidatorExistsForCountry } from 'postcode-validator'

/**
 * The address rules a request is checked against before anything is charged; the address
 * worker's normalization applies the same ones (normalize.ts).
 */

/** An assigned ISO 3166-1 alpha-2 code, in any case. */
export function isAssignedCountry(code: string): boolean {
  return /^[A-Za-z]{2}$/.test(code) && countries.isValid(code.toUpperCase())
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
