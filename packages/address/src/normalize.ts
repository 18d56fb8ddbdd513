import type { Recipient, VerifiedAddress } from '@letters/contracts'
import { spanishCountryName } from './countries.js'
import { isPostalCodeOf, padPostalCode } from './rules.js'
import { spanishProvinces } from './spanish-provinces.js'
import { expandStreetType, fixStreetCasing } from './street.js'
import { collapseSpaces, fixCasing, foldForComparison } from './text.js'

/** The recipient block as the client sent it. */
export type AddressInput = Recipient

/** What normalization makes of it: the stored verified address (contracts), but for which verifier said so. */
export type NormalizedAddress = Omit<VerifiedAddress, 'verifiedBy'>
export type Deliverability = NormalizedAddress['deliverability']
export type AddressChange = NormalizedAddress['changes'][number]

/** A state or region written as its postal code (DC, NY, NSW, ON): the post reads it in capitals, as written. */
const isRegionCode = (province: string) => /^[A-Z]{2,3}$/.test(province)

function provinceOf(zip: string): readonly string[] | undefined {
  return /^\d{5}$/.test(zip) ? spanishProvinces[zip.slice(0, 2)] : undefined
}

/**
 * Cleans a recipient address and says whether it can be delivered: white space and casing
 * fixed, Spanish street types spelt out, postal code padded and checked against the country's
 * format, the Spanish province taken from the postal code (filled in, or corrected when it
 * contradicts it), and the country upper-cased and named. Pure: no I/O.
 */
export function normalizeAddress(input: AddressInput): NormalizedAddress {
  const changes: AddressChange[] = []
  const problems: string[] = []
  const change = (field: keyof AddressInput, from: string | null, to: string | null, reason: string) => {
    if (from !== to) changes.push({ field, from, to, reason })
    return to
  }
  const spaced = (field: 'name' | 'surname' | 'city' | 'address', value: string) => change(field, value, collapseSpaces(value), 'espacios') ?? ''
  const tidy = (field: 'name' | 'surname' | 'city', value: string) => {
    const text = spaced(field, value)
    return change(field, text, fixCasing(text), 'mayúsculas') ?? ''
  }

  const country = change('country', input.country, collapseSpaces(input.country).toUpperCase(), 'código de país en mayúsculas') ?? ''
  const countryName = spanishCountryName(country)
  if (!countryName) problems.push(`'${country}' no es un país ISO 3166-1`)

  const name = tidy('name', input.name)
  const surname = tidy('surname', input.surname)
  const city = tidy('city', input.city)
  // The street type is spelt out before the casing is judged, so that "C/ mayor" or "AVDA. de la
  // Constitución" count by their name alone, which is what the person typed carelessly or not.
  let address = spaced('address', input.address)
  if (country === 'ES') address = change('address', address, expandStreetType(address), 'tipo de vía sin abreviar') ?? ''
  address = change('address', address, fixStreetCasing(address), 'mayúsculas') ?? ''
  const company = input.company === null ? null : change('company', input.company, collapseSpaces(input.company) || null, 'espacios')

  const spacedZip = change('zip', input.zip, collapseSpaces(input.zip).toUpperCase(), 'espacios y mayúsculas') ?? ''
  const zip = change('zip', spacedZip, padPostalCode(spacedZip, country), 'ceros iniciales') ?? ''
  if (!isPostalCodeOf(zip, country)) {
    problems.push(`el código postal '${zip}' no tiene el formato de ${countryName || country}`)
  }

  let province = input.province === null ? null : collapseSpaces(input.province) || null
  change('province', input.province, province, 'espacios')
  if (country === 'ES') {
    const expected = provinceOf(zip)
    if (!expected) {
      problems.push(`el código postal '${zip}' no corresponde a ninguna provincia española`)
    } else if (!province) {
      province = change('province', province, expected[0]!, 'provincia deducida del código postal')
    } else if (!expected.some((spelling) => foldForComparison(spelling) === foldForComparison(province!))) {
      province = change('province', province, expected[0]!, `la provincia no coincide con el código postal ${zip}`)
    }
  } else if (province && !isRegionCode(province)) {
    province = change('province', province, fixCasing(province), 'mayúsculas')
  }

  const legible = (text: string) => /[\p{L}\p{N}]/u.test(text)
  if (!address) problems.push('la dirección está vacía')
  else if (!legible(address)) problems.push('la dirección no contiene letras ni números')
  if (!city) problems.push('la ciudad está vacía')
  else if (!legible(city)) problems.push('la ciudad no contiene letras')
  if (!name && !surname) problems.push('el destinatario no tiene nombre')

  const deliverability: Deliverability = problems.length > 0 ? 'undeliverable' : changes.length > 0 ? 'corrected' : 'deliverable'
  return { name, surname, company, address, zip, city, province, country, countryName, deliverability, changes, problems }
}
