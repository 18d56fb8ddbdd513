import { formatAddress } from 'localized-address-format'
import type { Recipient } from '@letters/contracts'
import { spanishCountryName } from './countries.js'
import { foldForComparison } from './text.js'

/**
 * What a recipient block is made from: a normalized address, or the recipient as sent before
 * verification (which has no `countryName`).
 */
export type BlockAddress = Recipient & { countryName?: string }

/**
 * Stand-ins for the fields, given to formatAddress instead of the values so that the layout can
 * be read (which line holds the town, what the country writes after it) before the values go in.
 * Private-use characters: no address contains them.
 */
const mark = { name: '\uE000', organization: '\uE001', street: '\uE002', town: '\uE003', area: '\uE004', postalCode: '\uE005' } as const

/**
 * The recipient block's lines exactly as printed on the envelope.
 *
 * Mail that stays in the floor's country (`originCountry`) carries the Spanish block the floor
 * has always written: name, company, street, then "CP Localidad (Provincia)", the province only
 * when it is not the town's name, and no country line.
 *
 * Mail abroad follows the destination's layout from Google's address data (libaddressinput, in
 * its Latin-script form, since the pens write Latin letters): the town in capitals, a state or
 * region written as the client wrote it ("DC", "NY"), no comma after the town (the sorting
 * machines and the readers abroad want none: "WASHINGTON DC 20500"), and the country's Spanish
 * name in capitals as the last line.
 */
export function recipientBlock(address: BlockAddress, originCountry: string): string[] {
  const country = address.country.toUpperCase()
  return country === originCountry.toUpperCase() ? domesticBlock(address) : [...foreignBlock(address, country), countryLine(address, country)]
}

function domesticBlock(address: BlockAddress): string[] {
  const place = [address.zip, address.city, address.province && address.province !== address.city ? `(${address.province})` : ''].filter(Boolean).join(' ')
  return [`${address.name} ${address.surname}`.trim(), address.company ?? '', address.address, place].filter((line) => line.trim())
}

function foreignBlock(address: BlockAddress, country: string): string[] {
  const town = address.city.trim().toLocaleUpperCase('es')
  const province = address.province?.trim() ?? ''
  // A province that only repeats the town ("Madrid", "Madrid") says nothing more to the post.
  const area = province && foldForComparison(province) !== foldForComparison(town) ? province : ''
  const values: Record<string, string> = {
    [mark.name]: `${address.name} ${address.surname}`.trim(),
    [mark.organization]: address.company?.trim() ?? '',
    [mark.street]: address.address.trim(),
    [mark.town]: town,
    [mark.area]: area,
    [mark.postalCode]: address.zip.trim(),
  }
  const layout = (streetLines: string[]) =>
    formatAddress(
      {
        postalCountry: country,
        name: values[mark.name] && mark.name,
        organization: values[mark.organization] && mark.organization,
        addressLines: streetLines,
        locality: town && mark.town,
        administrativeArea: area && mark.area,
        postalCode: values[mark.postalCode] && mark.postalCode,
      },
      'latin',
    )
  const street = values[mark.street] ? [mark.street] : []
  let lines = layout(street)
  // A few layouts have no place for the town (Japan's Latin form, the Emirates): unless the layout
  // already names it ("SINGAPORE", "GIBRALTAR") or the region does, it goes under the street, as
  // the address lines of those countries carry it, rather than being lost.
  const named = (line: string) => foldForComparison(line.replace(/[\uE000-\uE005]/gu, (field) => (field === mark.area ? area : ' ')))
  if (town && !lines.some((line) => line.includes(mark.town)) && !lines.some((line) => named(line).includes(foldForComparison(town)))) {
    lines = layout([...street, mark.town])
  }
  // A postal code the layout has no place for is left out: those countries have none, and what
  // a client types there to fill the field ("0", "00000") would only mislead.
  return lines
    .map((line) =>
      line
        .replace(new RegExp(`${mark.town}\\s*,\\s*`, 'gu'), `${mark.town} `)
        .replace(/[\uE000-\uE005]/gu, (field) => values[field]!)
        .replace(/\s+/gu, ' ')
        // formatAddress breaks the line after a second address line, leaving the separator that
        // followed it at the start of the next ("1-1 Chiyoda" / "CHIYODA-KU" / ", Tokyo").
        .replace(/^[\s,]+|[\s,]+$/gu, ''),
    )
    .filter((line) => line !== '')
}

function countryLine(address: BlockAddress, country: string): string {
  // Named from the code, so that a recipient as sent and its verified address print the same line.
  return (spanishCountryName(country) || address.countryName || country).toLocaleUpperCase('es')
}
