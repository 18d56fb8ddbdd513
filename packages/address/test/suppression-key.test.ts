import { describe, expect, it } from 'vitest'
import { comparableAddress, suppressionKey } from '../src/index.js'

const madrid = { address: 'Calle Mayor 1, 3º B', zip: '28013', country: 'ES' }

describe('the suppression key of an address', () => {
  it.for([
    ['case and accents', { ...madrid, address: 'CALLE MAYOR 1, 3º b' }],
    ['a street-type abbreviation', { ...madrid, address: 'C/ Mayor 1, 3º B' }],
    ['punctuation and spaces', { ...madrid, address: '  Calle  Mayor, 1 - 3ºB ' }],
    ['a postal code with a space', { ...madrid, zip: '28 013' }],
    ['a country in lower case', { ...madrid, country: 'es' }],
    ['an ordinal mark left out', { ...madrid, address: 'Calle Mayor 1, 3B' }],
    ['the number written out', { ...madrid, address: 'C/ Mayor, nº 1, 3.º B' }],
    ['"número" and a particle', { ...madrid, address: 'Calle de Mayor número 1, 3ºB' }],
    ['the floor and the door named', { ...madrid, address: 'Calle Mayor 1, piso 3, puerta B' }],
    ['a postal code a spreadsheet cut', { address: 'Calle Mayor 1', zip: '8001', country: 'ES' }, { address: 'Calle Mayor 1', zip: '08001', country: 'ES' }],
  ] as const)('is the same for two spellings the post reads alike: %s', ([, one, other = madrid]) => {
    expect(suppressionKey('account', one)).toBe(suppressionKey('account', other))
  })

  it.for([
    ['another floor', { ...madrid, address: 'Calle Mayor 1, 4º B' }],
    ['another number', { ...madrid, address: 'Calle Mayor 3, 3º B' }],
    ['another postal code', { ...madrid, zip: '28014' }],
    ['another country', { ...madrid, country: 'PT' }],
    ['a street with ñ for one with n', { ...madrid, address: 'Calle Mayór 1, 3º B' }, { ...madrid, address: 'Calle Peña 1, 3º B' }],
    ['the numbers run together', { ...madrid, address: 'Calle Mayor 13 B' }],
  ] as const)('differs for another address: %s', ([, other, than = madrid]) => {
    expect(suppressionKey('account', other)).not.toBe(suppressionKey('account', than))
  })

  it('keeps ñ apart from n: Peña and Pena are two streets', () => {
    expect(suppressionKey('account', { ...madrid, address: 'Calle Peña 1' })).not.toBe(suppressionKey('account', { ...madrid, address: 'Calle Pena 1' }))
    expect(suppressionKey('account', { ...madrid, address: 'CALLE PEÑA 1' })).toBe(suppressionKey('account', { ...madrid, address: 'calle peña 1' }))
  })

  it("differs between accounts, and holds nothing of the address's text", () => {
    const key = suppressionKey('account-a', madrid)
    expect(key).not.toBe(suppressionKey('account-b', madrid))
    expect(key).toMatch(/^[0-9a-f]{64}$/)
    expect(comparableAddress(madrid)).toBe('calle mayor 1 3 b\n28013\nES')
  })
})
