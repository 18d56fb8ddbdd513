export { normalizeAddress, type AddressInput, type AddressChange, type Deliverability, type NormalizedAddress } from './normalize.js'
export { spanishProvinces } from './spanish-provinces.js'
export { isAssignedCountry, isPostalCodeOf, padPostalCode } from './rules.js'
export { recipientBlock, type BlockAddress } from './block.js'
export { spanishCountryName } from './countries.js'

import { normalizeAddress, type AddressInput, type NormalizedAddress } from './normalize.js'

/**
 * Where a real verification service (one that knows which streets exist) plugs in. The
 * built-in provider works offline with the rules of `normalizeAddress`.
 */
export interface AddressVerifier {
  readonly name: string
  verify(input: AddressInput): Promise<NormalizedAddress>
}

export const offlineVerifier: AddressVerifier = {
  name: 'offline',
  verify: async (input) => normalizeAddress(input),
}
export { comparableAddress, suppressedAddressOf, suppressionKey, type AddressKeyInput, type SuppressedAddress } from './suppression-key.js'
