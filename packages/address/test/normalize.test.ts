import { describe, expect, it } from 'vitest'
import { sampleRecipient } from '@letters/test/support/factories'
import { normalizeAddress, offlineVerifier, padPostalCode, spanishProvinces, type AddressInput } from '../src/index.js'

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

  it.each([
    ['c/ mayor 12', 'Calle Mayor 12'],
    ['C/ mayor 12', 'Calle Mayor 12'],
    ['avda de la constitución', 'Avenida de la Constitución'],
    ['Avda de la constitución 5', 'Avenida de la Constitución 5'],
    ['C/ MAYOR 3', 'Calle Mayor 3'],
    ['Calle MAYOR 3', 'Calle Mayor 3'],
    ['C/ McDonald 3', 'Calle McDonald 3'],
    ['CALLE ALFONSO XII 3, 2º A', 'Calle Alfonso XII 3, 2º A'],
    ['AVDA. JUAN CARLOS I 12, ESC. B, 4º E', 'Avenida Juan Carlos I 12, Esc. B, 4º E'],
    ['calle alfonso xii 3, 2º a', 'Calle Alfonso XII 3, 2º A'],
    ['PLAZA DE CARLOS V', 'Plaza de Carlos V'],
    ['CALLE PÍO XII S/N', 'Calle Pío XII S/N'],
    ['CARRER DE PAU I CLARIS 100', 'Carrer de Pau i Claris 100'],
    ['CALLE MIL 3', 'Calle Mil 3'],
    ['CALLE DEL CID CAMPEADOR 3', 'Calle del Cid Campeador 3'],
    ['CALLE DE MI CASA 3', 'Calle de Mi Casa 3'],
    ['CALLE DIVINO PASTOR 3', 'Calle Divino Pastor 3'],
    ['CALLE MAYOR 3, PORTAL B, PUERTA A', 'Calle Mayor 3, Portal B, Puerta A'],
    ['CALLE MAYOR 3, BL. A, ESC. I, 1ª O', 'Calle Mayor 3, Bl. A, Esc. I, 1ª O'],
    ['CALLE MAYOR 12B, 2ºA', 'Calle Mayor 12B, 2ºA'],
    ['calle mayor 3 a', 'Calle Mayor 3 A'],
    ['CALLE MAYOR 3 Y 5', 'Calle Mayor 3 y 5'],
    ['CTRA. N-II KM 12', 'Carretera N-II Km 12'],
    ['CARRER D’ARAGÓ 12', 'Carrer d’Aragó 12'],
    ['calle mayor 12, 3º B', 'Calle Mayor 12, 3º B'],
    ['calle alfonso XII 3, 2º A', 'Calle Alfonso XII 3, 2º A'],
    ['calle mayor 12, esc. B', 'Calle Mayor 12, Esc. B'],
    ['avda. juan carlos I 12, 4º E', 'Avenida Juan Carlos I 12, 4º E'],
    ['Calle McDonald 3, 2º B', 'Calle McDonald 3, 2º B'],
    ['Carretera de Valencia km 7', 'Carretera de Valencia km 7'],
  ])('fixes the casing of the Spanish street %s', (street, expected) => {
    expect(normalizeAddress({ ...clean, address: street }).address).toBe(expected)
  })

  it('keeps roman numerals out of names, which fix their casing as before', () => {
    expect(normalizeAddress({ ...clean, name: 'MARÍA DEL MAR', surname: 'DI STEFANO LI' })).toMatchObject({ name: 'María del Mar', surname: 'Di Stefano Li' })
  })

  it('records a spelt-out street type and a casing fix as two changes', () => {
    expect(normalizeAddress({ ...clean, address: 'AVDA. DE LA PAZ 5' }).changes).toEqual([
      { field: 'address', from: 'AVDA. DE LA PAZ 5', to: 'Avenida DE LA PAZ 5', reason: 'tipo de vía sin abreviar' },
      { field: 'address', from: 'Avenida DE LA PAZ 5', to: 'Avenida de la Paz 5', reason: 'mayúsculas' },
    ])
  })

  it('keeps the capitals of numerals outside Spain too, without Spanish street types', () => {
    const result = normalizeAddress({ ...clean, address: '12 RUE LOUIS XIV', zip: '75001', city: 'PARIS', province: null, country: 'FR' })
    expect(result).toMatchObject({ address: '12 Rue Louis XIV', city: 'Paris' })
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

  it.each([
    ['8001', 'ES', '08001'],
    [' 8001 ', 'ES', '08001'],
    ['1067', 'de', '01067'],
    ['501', 'US', '00501'],
    ['28013', 'ES', '28013'],
    ['2801A', 'ES', '2801A'],
    ['1010', 'AT', '1010'],
    ['SW1A 2AA', 'GB', 'SW1A 2AA'],
  ])('pads the postal code %s of %s to %s', (zip, country, padded) => {
    expect(padPostalCode(zip, country)).toBe(padded)
  })

  it('still refuses a padded code that is no code', () => {
    expect(normalizeAddress({ ...clean, zip: '801', province: null }).problems).toContain(
      "el código postal '00801' no corresponde a ninguna provincia española",
    )
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

describe('state and region codes', () => {
  it('keeps DC, NY and NSW as written, and still fixes a shouted region name', () => {
    const base = { name: 'Jane', surname: 'Doe', company: null, address: '1600 Pennsylvania Ave NW', zip: '20500', city: 'Washington', country: 'US' }
    expect(normalizeAddress({ ...base, province: 'DC' }).province).toBe('DC')
    expect(normalizeAddress({ ...base, zip: '10001', city: 'New York', province: 'NY' }).province).toBe('NY')
    expect(normalizeAddress({ ...base, zip: '2000', city: 'Sydney', country: 'AU', province: 'NSW' }).province).toBe('NSW')
    expect(normalizeAddress({ ...base, zip: '80331', city: 'München', country: 'DE', province: 'BAYERN' }).province).toBe('Bayern')
  })
})
