import countries from 'i18n-iso-countries'
import spanish from 'i18n-iso-countries/langs/es.json' with { type: 'json' }
import type { Recipient, VerifiedAddress } from '@letters/contracts'
import { isPostalCodeOf } from './rules.js'
import { spanishProvinces } from './spanish-provinces.js'
import { expandStreetType } from './street.js'
import { collapseSpaces, fixCasing, foldForComparison } from './text.js'

countries.registerLocale(spanish)

/** The recipient block as the client sent it. */
export type AddressInput = Recipient

/** What normalization makes of it: the stored verified address (contracts), but for which verifier said so. */
export type NormalizedAddress = Omit<VerifiedAddress, 'verifiedBy'>
export type Deliverability = NormalizedAddress['deliverability']
export type AddressChange = NormalizedAddress['changes'][number]

/** Postal codes whose leading zeros a spreadsheet ate: the length they should have. */
const zipLengths: Record<string, number> = { ES: 5, FR: 5, DE: 5, IT: 5, US: 5 }

function padZip(zip: string, country: string): string {
  const length = zipLengths[country]
  return length && /^\d+$/.test(zip) && zip.length < length ? zip.padStart(length, '0') : zip
}

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
  const tidy = (field: 'name' | 'surname' | 'city' | 'address', value: string) => {
    const spaced = change(field, value, collapseSpaces(value), 'espacios') ?? ''
    return change(field, spaced, fixCasing(spaced), 'mayúsculas') ?? ''
  }

  const country = change('country', input.country, collapseSpaces(input.country).toUpperCase(), 'código de país en mayúsculas') ?? ''
  const countryName = countries.getName(country, 'es') ?? ''
  if (!countryName) problems.push(`'${country}' no es un país ISO 3166-1`)

  const name = tidy('name', input.name)
  const surname = tidy('surname', input.surname)
  const city = tidy('city', input.city)
  let address = tidy('address', input.address)
  if (country === 'ES') address = change('address', address, expandStreetType(address), 'tipo de vía sin abreviar') ?? ''
  const company = input.company === null ? null : change('company', input.company, collapseSpaces(input.company) || null, 'espacios')

  const spacedZip = change('zip', input.zip, collapseSpaces(input.zip).toUpperCase(), 'espacios y mayúsculas') ?? ''
  const zip = change('zip', spacedZip, padZip(spacedZip, country), 'ceros iniciales') ?? ''
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
  } else if (province) {
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
