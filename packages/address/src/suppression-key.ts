import { createHash } from 'node:crypto'
import { expandStreetType } from './street.js'
import { foldForComparison } from './text.js'
import { padPostalCode } from './rules.js'

/** The parts of an address that say where a letter goes, as a recipient gives them. */
export interface AddressKeyInput {
  address: string
  zip: string
  country: string
}

/**
 * An address as the suppression list compares it: the street line with its type written out
 * ("C/ Mayor 1" is "Calle Mayor 1"), without case, accents or punctuation; the postal code without
 * spaces or dashes, as its country pads it; the country's code. Two spellings of one address the
 * post would read alike meet here; a different floor or door does not.
 */
export function comparableAddress({ address, zip, country }: AddressKeyInput): string {
  const code = country.trim().toUpperCase()
  const street = foldForComparison(expandStreetType(address.trim()))
    .replace(/[º°ª]/g, ' ')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim()
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
