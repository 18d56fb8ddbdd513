import { describe, expect, it } from 'vitest'
import { normalizeAddress, recipientBlock, type BlockAddress } from '../src/index.js'

const person = { name: 'Ana', surname: 'Ruiz', company: null }

/** The block without the name line, which every example shares. */
const below = (address: Omit<BlockAddress, 'name' | 'surname' | 'company'> & { company?: string | null }, origin = 'ES') =>
  recipientBlock({ ...person, ...address }, origin).slice(1)

describe('recipientBlock at home', () => {
  it('writes the Spanish block without a country line', () => {
    expect(recipientBlock({ ...person, address: 'Calle Mayor 1', zip: '28013', city: 'Madrid', province: 'Madrid', country: 'ES' }, 'ES')).toEqual([
      'Ana Ruiz',
      'Calle Mayor 1',
      '28013 Madrid',
    ])
  })

  it('adds the company and a province that is not the town, as the floor always has', () => {
    const address = {
      ...person,
      company: 'Luna S.L.',
      address: 'Calle Real 2',
      zip: '28701',
      city: 'San Sebastián de los Reyes',
      province: 'Madrid',
      country: 'ES',
    }
    expect(recipientBlock(address, 'ES')).toEqual(['Ana Ruiz', 'Luna S.L.', 'Calle Real 2', '28701 San Sebastián de los Reyes (Madrid)'])
  })

  it('keeps the town and the province as written, and skips empty lines', () => {
    const address = { name: '', surname: 'Ruiz', company: '', address: 'Calle Sierpes 4', zip: '41004', city: 'Sevilla', province: null, country: 'ES' }
    expect(recipientBlock(address, 'ES')).toEqual(['Ruiz', 'Calle Sierpes 4', '41004 Sevilla'])
  })

  it('is at home in whatever country the floor is', () => {
    expect(below({ address: 'Rua Augusta 1', zip: '1100-048', city: 'Lisboa', province: null, country: 'PT' }, 'PT')).toEqual([
      'Rua Augusta 1',
      '1100-048 Lisboa',
    ])
  })

  it('takes a normalized address as it comes', () => {
    const normalized = normalizeAddress({ ...person, address: 'c/ mayor 1', zip: '8001', city: 'BARCELONA', province: null, country: 'es' })
    expect(recipientBlock(normalized, 'ES')).toEqual(['Ana Ruiz', 'Calle Mayor 1', '08001 Barcelona'])
  })
})

describe('recipientBlock abroad', () => {
  it.each<[string, Omit<BlockAddress, 'name' | 'surname' | 'company'>, string[]]>([
    [
      'the United States',
      { address: '1600 Pennsylvania Ave NW', zip: '20500', city: 'Washington', province: 'DC', country: 'US' },
      ['1600 Pennsylvania Ave NW', 'WASHINGTON DC 20500', 'ESTADOS UNIDOS'],
    ],
    [
      'the United Kingdom',
      { address: '10 Downing Street', zip: 'SW1A 2AA', city: 'London', province: null, country: 'GB' },
      ['10 Downing Street', 'LONDON', 'SW1A 2AA', 'REINO UNIDO'],
    ],
    [
      'Germany',
      { address: 'Unter den Linden 1', zip: '10117', city: 'Berlin', province: null, country: 'DE' },
      ['Unter den Linden 1', '10117 BERLIN', 'ALEMANIA'],
    ],
    [
      'France',
      { address: '55 Rue du Faubourg Saint-Honoré', zip: '75008', city: 'Paris', province: null, country: 'FR' },
      ['55 Rue du Faubourg Saint-Honoré', '75008 PARIS', 'FRANCIA'],
    ],
  ])('follows the layout of %s', (_country, address, lines) => {
    expect(below(address)).toEqual(lines)
  })

  it('keeps a state code as written and drops the comma after the town', () => {
    expect(below({ address: '350 5th Ave', zip: '10118', city: 'new york', province: 'NY', country: 'US' })).toEqual([
      '350 5th Ave',
      'NEW YORK NY 10118',
      'ESTADOS UNIDOS',
    ])
    expect(below({ address: 'Paseo de la Reforma 50', zip: '11580', city: 'Ciudad de México', province: 'CDMX', country: 'MX' })).toEqual([
      'Paseo de la Reforma 50',
      '11580 CIUDAD DE MÉXICO CDMX',
      'MÉXICO',
    ])
  })

  it('writes the town in Spanish capitals, accents included', () => {
    expect(below({ address: 'Avenida Paulista 1000', zip: '01310-100', city: 'São Paulo', province: 'SP', country: 'BR' })).toEqual([
      'Avenida Paulista 1000',
      'SÃO PAULO-SP',
      '01310-100',
      'BRASIL',
    ])
  })

  it('puts the company where the country wants it', () => {
    expect(
      recipientBlock({ ...person, company: 'Maison Dupont', address: '1 Rue de Rivoli', zip: '75001', city: 'Paris', province: null, country: 'FR' }, 'ES'),
    ).toEqual(['Maison Dupont', 'Ana Ruiz', '1 Rue de Rivoli', '75001 PARIS', 'FRANCIA'])
    expect(
      recipientBlock({ ...person, company: 'Acme Inc.', address: '1 Main St', zip: '02108', city: 'Boston', province: 'MA', country: 'US' }, 'ES'),
    ).toEqual(['Ana Ruiz', 'Acme Inc.', '1 Main St', 'BOSTON MA 02108', 'ESTADOS UNIDOS'])
  })

  it('writes a Spanish address sent from a floor abroad in the Spanish layout, with the country', () => {
    expect(below({ address: 'Calle Real 2', zip: '28701', city: 'San Sebastián de los Reyes', province: 'Madrid', country: 'ES' }, 'PT')).toEqual([
      'Calle Real 2',
      '28701 SAN SEBASTIÁN DE LOS REYES Madrid',
      'ESPAÑA',
    ])
  })

  it('leaves out a province that only repeats the town', () => {
    expect(below({ address: 'Via del Corso 1', zip: '00186', city: 'Roma', province: 'ROMA', country: 'IT' })).toEqual([
      'Via del Corso 1',
      '00186 ROMA',
      'ITALIA',
    ])
  })

  it('falls back to name, street and town for a country without a layout, leaving out a postal code it has no use for', () => {
    expect(below({ address: 'Al Corniche St', zip: '00000', city: 'Doha', province: null, country: 'QA' })).toEqual(['Al Corniche St', 'DOHA', 'CATAR'])
  })

  it('keeps the town when the layout has no place for it, unless the layout already names it', () => {
    expect(below({ address: 'Sheikh Zayed Road 1', zip: '0', city: 'Dubai', province: null, country: 'AE' })).toEqual([
      'Sheikh Zayed Road 1',
      'DUBAI',
      'EMIRATOS ÁRABES UNIDOS',
    ])
    expect(below({ address: '1-1 Chiyoda', zip: '100-0001', city: 'Chiyoda-ku', province: 'Tokyo', country: 'JP' })).toEqual([
      '1-1 Chiyoda',
      'CHIYODA-KU',
      'Tokyo',
      '100-0001',
      'JAPÓN',
    ])
    expect(below({ address: '1 Raffles Place', zip: '048616', city: 'Singapore', province: null, country: 'SG' })).toEqual([
      '1 Raffles Place',
      'SINGAPORE 048616',
      'SINGAPUR',
    ])
  })

  it('names the country from its code, whatever the address says', () => {
    expect(below({ address: '10 Downing Street', zip: 'SW1A 2AA', city: 'London', province: null, country: 'GB', countryName: 'Gran Bretaña' }).at(-1)).toBe(
      'REINO UNIDO',
    )
  })
})
