import { createHash } from 'node:crypto'
import { expandStreetType } from './street.js'
import { padPostalCode } from './rules.js'

/** The parts of an address that say where a letter goes, as a recipient gives them. */
export interface AddressKeyInput {
  address: string
  zip: string
  country: string
}

/**
 * Words a street line may carry or leave out without naming another place: the particles ("Calle
 * de la Paz" is "Calle Paz"), the number's word ("nº 12", "número 12") and the names of a floor
 * and a door ("piso 3, puerta A" is "3 A").
 */
const fillerWords = new Set(['de', 'del', 'la', 'las', 'los', 'el', 'n', 'no', 'num', 'numero', 'piso', 'puerta', 'pta'])

/** Lower case without accents, but ñ kept: "Peña" and "Pena" are two streets. */
const fold = (text: string) =>
  text
    .toLowerCase()
    .normalize('NFD')
    .replace(/n\u0303/g, '\u00f1')
    .replace(/\p{M}/gu, '')

/**
 * An address as the suppression list compares it: the street line with its type written out
 * ("C/ Mayor 1" is "Calle Mayor 1"), without case, accents, punctuation, ordinal marks ("3º A" is
 * "3A" is "3 A") or filler words; the postal code without spaces or dashes, as its country pads
 * it; the country's code. Two spellings of one address the post would read alike meet here; a
 * different number, floor or door does not.
 */
export function comparableAddress({ address, zip, country }: AddressKeyInput): string {
  const code = country.trim().toUpperCase()
  const street = fold(expandStreetType(address.trim()))
    .replace(/[º°ª]/g, '')
    .replace(/(\p{N})(\p{L})/gu, '$1 $2')
    .replace(/(\p{L})(\p{N})/gu, '$1 $2')
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word !== '' && !fillerWords.has(word))
    .join(' ')
  const postal = padPostalCode(zip.replace(/[\s-]+/g, ''), code).toUpperCase()
  return `${street}\n${postal}\n${code}`
}

/**
 * The key an address is kept under in one account's suppression list: a SHA-256 of the account
 * and the comparable address, so the list holds no street, and one account's key tells nothing
 * of another's.
 */
export function suppressionKey(accountId: string, input: AddressKeyInput): string {
  return createHash('sha256')
    .update(`${accountId}\n${comparableAddress(input)}`)
    .digest('hex')
}

/** An address as a suppression list keeps it: its key (suppressionKey), its postal code and its country; never the street. */
export interface SuppressedAddress {
  key: string
  zip: string
  country: string
}

/** The address of one account's recipient as its suppression list keeps it. */
export function suppressedAddressOf(accountId: string, input: AddressKeyInput): SuppressedAddress {
  return { key: suppressionKey(accountId, input), zip: input.zip, country: input.country }
}
