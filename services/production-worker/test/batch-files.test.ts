import { describe, expect, it } from 'vitest'
import { parse } from 'csv-parse/sync'
import type { PrintSpec } from '@letters/contracts'
import { MANIFEST_COLUMNS, manifestCsv, presorted, type BatchLetter } from '../src/batch-files.js'

let next = 0
const letter = (address: Partial<BatchLetter['address']>, letterId = `00000000-0000-4000-8000-${String(++next).padStart(12, '0')}`): BatchLetter => ({
  letterId,
  code: `CODE${String(next).padStart(6, '0')}`,
  address: { name: 'Ana', surname: 'Ruiz', address: 'Calle Mayor 1', zip: '28013', city: 'Madrid', province: 'Madrid', country: 'ES', ...address },
})

describe('presorted: the order of a batch', () => {
  it('sorts by country, then postal code, then street', () => {
    const batch = [
      letter({ country: 'PT', zip: '1000-001', address: 'Rua Augusta 1' }),
      letter({ zip: '41004', address: 'Calle Sierpes 4' }),
      letter({ zip: '08001', address: 'Carrer Ample 2' }),
      letter({ country: 'DE', zip: '10115', address: 'Invalidenstraße 1' }),
      letter({ zip: '41004', address: 'Avenida de la Constitución 9' }),
      letter({ country: 'FR', zip: '75001', address: 'Rue de Rivoli 3' }),
    ]
    expect(presorted(batch).map((l) => `${l.address.country} ${l.address.zip} ${l.address.address}`)).toEqual([
      'DE 10115 Invalidenstraße 1',
      'ES 08001 Carrer Ample 2',
      'ES 41004 Avenida de la Constitución 9',
      'ES 41004 Calle Sierpes 4',
      'FR 75001 Rue de Rivoli 3',
      'PT 1000-001 Rua Augusta 1',
    ])
  })

  it('compares streets as a Spanish reader does: numbers by value, accents after their letter, ñ after n', () => {
    const batch = [
      letter({ address: 'Calle 10' }),
      letter({ address: 'Calle Ñandú 1' }),
      letter({ address: 'Calle 9' }),
      letter({ address: 'Calle Nube 1' }),
      letter({ address: 'Calle Ábside 1' }),
    ]
    expect(presorted(batch).map((l) => l.address.address)).toEqual(['Calle 9', 'Calle 10', 'Calle Ábside 1', 'Calle Nube 1', 'Calle Ñandú 1'])
  })

  it('breaks ties by the letter id, so the same batch always gets the same order, and leaves its input alone', () => {
    const a = letter({}, '00000000-0000-4000-8000-00000000000a')
    const b = letter({}, '00000000-0000-4000-8000-00000000000b')
    const input = [b, a]
    expect(presorted(input)).toEqual([a, b])
    expect(presorted([a, b])).toEqual([a, b])
    expect(input).toEqual([b, a])
  })
})

describe('manifestCsv', () => {
  it('starts with a UTF-8 byte-order mark and the header, and ends lines with CRLF', () => {
    const csv = manifestCsv([letter({ name: 'Lucía', surname: 'Gómez' })])
    expect([...csv.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf])
    const text = csv.toString('utf8').slice(1)
    expect(text.split('\r\n')[0]).toBe(MANIFEST_COLUMNS.join(','))
    expect(text).toContain('Lucía Gómez')
    expect(text.endsWith('\r\n')).toBe(true)
  })

  it('quotes names with commas, quotes and line breaks so they read back whole, one row per letter in order', () => {
    const awkward = [
      letter({ name: 'Ruiz, Ana', surname: '', zip: '28001' }),
      letter({ name: 'Ana "la de Sevilla"', surname: 'Ruiz', province: null }),
      letter({ name: 'Ana\nMaría', surname: 'Ruiz\r\nLópez', city: 'San Sebastián, Donostia' }),
    ]
    const csv = manifestCsv(awkward)
    expect(csv.toString('utf8')).toContain('"Ana ""la de Sevilla"" Ruiz"')
    const rows = parse<Record<string, string>>(csv, { bom: true, columns: true })
    expect(rows).toEqual(
      awkward.map((l, index) => ({
        sequence: String(index + 1),
        letterId: l.letterId,
        code: l.code,
        name: `${l.address.name} ${l.address.surname}`.trim(),
        zip: l.address.zip,
        city: l.address.city,
        province: l.address.province ?? '',
        country: l.address.country,
        // Letters accepted before designs had a product name no design or stock.
        cardDesign: '',
        cardStock: '',
        envelopeDesign: '',
        envelopeStock: '',
      })),
    )
  })

  it('names each letter’s designs and the stocks the floor loads, and neutralises a design name Excel would run', () => {
    const spec = (card: Partial<PrintSpec['card']>, envelope: Partial<PrintSpec['envelope']>): PrintSpec => ({
      card: {
        designId: '11111111-1111-4111-8111-111111111111',
        name: 'Floral',
        format: 'A6',
        production: 'printed',
        stockCode: null,
        artwork: { version: 2, sha256: 'x' },
        ...card,
      },
      envelope: {
        designId: '22222222-2222-4222-8222-222222222222',
        name: 'Kraft',
        format: 'C6',
        stockCode: 'C6-KRAFT',
        paperColor: '#C8A27A',
        artwork: null,
        ...envelope,
      },
      signature: null,
      senderName: 'Luna',
      returnAddress: null,
    })
    const rows = parse<Record<string, string>>(
      manifestCsv([
        { ...letter({}), printSpec: spec({}, {}) },
        {
          ...letter({}),
          printSpec: spec({ name: '=HYPERLINK("x")', production: 'preprinted', stockCode: 'CLASICA-A6', artwork: null }, { format: 'DL', stockCode: null }),
        },
      ]),
      { bom: true, columns: true },
    )
    expect(rows.map((row) => [row.cardDesign, row.cardStock, row.envelopeDesign, row.envelopeStock])).toEqual([
      ['Floral', 'A6 11111111-1111-4111-8111-111111111111@2 + anverso impreso', 'Kraft', 'C6 C6-KRAFT'],
      ['\'=HYPERLINK("x")', 'A6 CLASICA-A6', 'Kraft', 'DL 22222222-2222-4222-8222-222222222222@0'],
    ])
  })
})
