import { describe, expect, it } from 'vitest'
import { sampleRecipient } from '@letters/test/support/factories'
import { normalizeAddress, offlineVerifier, spanishProvinces, type AddressInput } from '../src/index.js'

const clean: AddressInput = sampleRecipient

describe('normalizeAddress', () => {
  it('calls a clean Spanish address deliverable and changes nothing', () => {
    expect(normalizeAddress(clean)).toEqual({ ...clean, countryName: 'España', deliverability: 'deliverable', changes: [], problems: [] })
  })

  it('trims and collapses white space in every field', () => {
    const result = normalizeAddress({ ...clean, name: '  Lucía ', surname: 'García\t López', address: 'Calle  Mayor\n 1', city: ' Madrid ' })
    expect(result).toMatchObject({ name: 'Lucía', surname: 'García López', address: 'Calle Mayor 1', city: 'Madrid', deliverability: 'corrected' })
    expect(result.changes.map((change) => [change.field, change.reason])).toEqual([
      ['name', 'espacios'],
      ['surname', 'espacios'],
      ['city', 'espacios'],
      ['address', 'espacios'],
    ])
  })

  it('fixes text typed all in capitals or all in small letters, and leaves mixed case alone', () => {
    const result = normalizeAddress({ ...clean, name: 'MARÍA JOSÉ', surname: 'de la fuente', city: 'SAN SEBASTIÁN DE LOS REYES', zip: '28701', province: '' })
    expect(result).toMatchObject({ name: 'María José', surname: 'De la Fuente', city: 'San Sebastián de los Reyes' })
    expect(normalizeAddress({ ...clean, surname: 'McDonald' }).surname).toBe('McDonald')
  })

  it.each([
    ['C/ Mayor 3', 'Calle Mayor 3'],
    ['c/mayor 3', 'Calle Mayor 3'],
    ['Avda. de la Constitución 5', 'Avenida de la Constitución 5'],
    ['Av Diagonal 640', 'Avenida Diagonal 640'],
    ['Pza. de España 1', 'Plaza de España 1'],
    ['Pº de la Castellana 100', 'Paseo de la Castellana 100'],
    ['Ctra. de Valencia km 7', 'Carretera de Valencia km 7'],
    ['Trav. de Gracia 12', 'Travesía de Gracia 12'],
    ['Urb. Los Pinos 4', 'Urbanización Los Pinos 4'],
    ['Pozuelo 3', 'Pozuelo 3'],
    ['Platería 8', 'Platería 8'],
  ])('spells out the Spanish street type in %s', (street, expected) => {
    expect(normalizeAddress({ ...clean, address: street }).address).toBe(expected)
  })

  it('leaves street abbreviations alone outside Spain', () => {
    expect(normalizeAddress({ ...clean, address: 'Av. da Liberdade 10', zip: '1250-096', city: 'Lisboa', province: null, country: 'PT' }).address).toBe(
      'Av. da Liberdade 10',
    )
  })

  it('pads a Spanish postal code that lost its leading zero, and derives the province', () => {
    const result = normalizeAddress({ ...clean, zip: '8001', city: 'Barcelona', province: '' })
    expect(result).toMatchObject({ zip: '08001', province: 'Barcelona', deliverability: 'corrected' })
    expect(result.changes).toContainEqual({ field: 'zip', from: '8001', to: '08001', reason: 'ceros iniciales' })
    expect(result.changes).toContainEqual({ field: 'province', from: null, to: 'Barcelona', reason: 'provincia deducida del código postal' })
  })

  it('corrects a province that contradicts the postal code', () => {
    const result = normalizeAddress({ ...clean, zip: '41001', city: 'Sevilla', province: 'Madrid' })
    expect(result).toMatchObject({ province: 'Sevilla', deliverability: 'corrected' })
    expect(result.changes).toContainEqual({ field: 'province', from: 'Madrid', to: 'Sevilla', reason: 'la provincia no coincide con el código postal 41001' })
  })

  it.each([
    ['48001', 'Vizcaya'],
    ['48001', 'bizkaia'],
    ['15001', 'La Coruña'],
    ['07001', 'Baleares'],
    ['29001', 'malaga'],
  ])('accepts %s with the other spelling %s', (zip, province) => {
    const result = normalizeAddress({ ...clean, zip, province })
    expect(result.province).toBe(province)
    expect(result.changes.filter((change) => change.field === 'province')).toEqual([])
  })

  it('knows all 52 provinces', () => {
    expect(Object.keys(spanishProvinces)).toHaveLength(52)
    expect(normalizeAddress({ ...clean, zip: '52001', city: 'Melilla', province: null }).province).toBe('Melilla')
  })

  it('upper-cases the country and names it in Spanish', () => {
    const result = normalizeAddress({ ...clean, zip: '10115', city: 'Berlin', province: null, country: 'de' })
    expect(result).toMatchObject({ country: 'DE', countryName: 'Alemania', province: null, deliverability: 'corrected' })
  })

  it('upper-cases a British postcode and keeps it deliverable', () => {
    const result = normalizeAddress({ ...clean, address: '10 Downing Street', zip: 'sw1a 2aa', city: 'London', province: null, country: 'GB' })
    expect(result).toMatchObject({ zip: 'SW1A 2AA', deliverability: 'corrected', problems: [] })
  })

  it.each([
    ['an address of only spaces', { address: '   ' }, 'la dirección está vacía'],
    ['a city of only spaces', { city: ' \t ' }, 'la ciudad está vacía'],
    ['a street of punctuation only', { address: '... ,' }, 'la dirección no contiene letras ni números'],
    ['a city of punctuation only', { city: '-' }, 'la ciudad no contiene letras'],
    ['a Spanish postal code outside every province', { zip: '60001', province: '' }, "el código postal '60001' no corresponde a ninguna provincia española"],
    ['a postal code of the wrong format', { zip: '2801A' }, "el código postal '2801A' no tiene el formato de España"],
    ['an unknown country', { country: 'XX', zip: '1' }, "'XX' no es un país ISO 3166-1"],
  ])('calls %s undeliverable and says why', (_name, change, problem) => {
    const result = normalizeAddress({ ...clean, ...change })
    expect(result.deliverability).toBe('undeliverable')
    expect(result.problems).toContain(problem)
  })

  it('is idempotent: normalizing the result again changes nothing', () => {
    const once = normalizeAddress({ ...clean, name: 'ANA', address: 'c/ mayor  3', zip: '8001', city: 'BARCELONA', province: 'madrid' })
    const twice = normalizeAddress({ ...once, country: once.country })
    expect(twice).toMatchObject({
      name: once.name,
      address: once.address,
      zip: once.zip,
      city: once.city,
      province: once.province,
      deliverability: 'deliverable',
      changes: [],
    })
  })

  it('is what the offline verifier answers', async () => {
    expect(await offlineVerifier.verify(clean)).toEqual(normalizeAddress(clean))
  })
})
