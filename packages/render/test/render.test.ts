import { describe, expect, it } from 'vitest'
import { compact, pdfText as textOf } from '@letters/test/support/pdf'
import { fontNames } from '@letters/contracts'
import { MESSAGE_BOX, MIN_FONT_SIZE, addressLines, cardLayout, renderCard, renderEnvelope, renderProof, type LetterToRender } from '../src/index.js'

const letter: LetterToRender = {
  letterId: '3f0c6a52-8d0e-4c55-9d5e-5b1f0c1f2a10',
  fontName: 'caveat',
  message: '¡Hola, Lucía! Gracias por confiar en nosotros. ¿Nos vemos en Sevilla?',
  signature: 'Ana, de Papelería Luna',
  recipientLines: addressLines({ name: 'Lucía', surname: 'García', company: null, address: 'Calle Mayor 1', zip: '28013', city: 'Madrid', province: 'Madrid', countryName: 'España' }),
  senderLines: ['Papelería Luna', 'Calle Sierpes 4', '41004 Sevilla'],
}

describe('renderCard', () => {
  it('draws a valid one-page PDF holding the message and the signature', async () => {
    const pdf = await renderCard(letter)
    expect(pdf.subarray(0, 5).toString()).toBe('%PDF-')
    expect(pdf.subarray(-6).toString()).toContain('%%EOF')
    const { pages, text } = await textOf(pdf)
    expect(pages).toBe(1)
    expect(text).toContain(compact(letter.message))
    expect(text).toContain(compact(letter.signature))
  })

  it('is identical when the same letter is printed again', async () => {
    expect((await renderCard(letter)).equals(await renderCard({ ...letter }))).toBe(true)
  })

  it('draws two letters with the same text differently', async () => {
    const other = await renderCard({ ...letter, letterId: '9a1d2b3c-4e5f-4a6b-8c7d-0e1f2a3b4c5d' })
    expect(other.equals(await renderCard(letter))).toBe(false)
  })

  it('fits 1,000 characters on the card', async () => {
    const message = Array.from({ length: 120 }, (_, i) => `palabra${i % 10}`).join(' ').slice(0, 1000)
    expect(message).toHaveLength(1000)
    const { pages, text } = await textOf(await renderCard({ ...letter, message }))
    expect(pages).toBe(1)
    expect(text).toContain(compact(message))
    for (const fontName of fontNames) {
      const layout = cardLayout({ fontName, message })
      // It fits above the floor: at the floor, fitSize gives up fitting.
      expect(layout.size, fontName).toBeGreaterThan(MIN_FONT_SIZE)
      expect(layout.lines.length * layout.size * layout.lineHeight, fontName).toBeLessThanOrEqual(MESSAGE_BOX.height)
      expect(layout.lines.join(' ').replace(/\s+/g, ' '), fontName).toBe(message)
    }
  })

  it('writes a short message larger than a long one', () => {
    expect(cardLayout({ fontName: 'caveat', message: 'Gracias' }).size).toBeGreaterThan(cardLayout({ fontName: 'caveat', message: 'palabra '.repeat(120) }).size)
  })

  it.each(fontNames)('writes in %s', async (fontName) => {
    const { text } = await textOf(await renderCard({ ...letter, fontName }))
    expect(text).toContain(compact(letter.message))
  })
})

describe('renderEnvelope', () => {
  it('carries the recipient and the sender blocks', async () => {
    const { pages, text } = await textOf(await renderEnvelope(letter))
    expect(pages).toBe(1)
    for (const line of [...letter.recipientLines, ...letter.senderLines]) expect(text).toContain(compact(line))
  })

  it('is identical when printed again', async () => {
    expect((await renderEnvelope(letter)).equals(await renderEnvelope(letter))).toBe(true)
  })
})

describe('renderProof', () => {
  it('shows the card on page 1 and the envelope on page 2', async () => {
    const { pages, text } = await textOf(await renderProof(letter))
    expect(pages).toBe(2)
    expect(text.indexOf(compact(letter.message))).toBeGreaterThanOrEqual(0)
    expect(text.indexOf(compact(letter.recipientLines[0]!))).toBeGreaterThan(text.indexOf(compact(letter.message)))
  })

  it('is the same document every time it is asked for', async () => {
    expect((await renderProof(letter)).equals(await renderProof(letter))).toBe(true)
  })
})

describe('addressLines', () => {
  it('writes the block the post expects, without empty lines', () => {
    expect(letter.recipientLines).toEqual(['Lucía García', 'Calle Mayor 1', '28013 Madrid', 'España'])
    expect(addressLines({ name: 'Ana', surname: 'Ruiz', company: 'Luna S.L.', address: 'Calle Sierpes 4', zip: '08001', city: 'Barcelona', province: 'Barcelona' })).toEqual([
      'Ana Ruiz',
      'Luna S.L.',
      'Calle Sierpes 4',
      '08001 Barcelona',
    ])
    expect(addressLines({ name: 'Ana', surname: 'Ruiz', company: null, address: 'Calle Real 2', zip: '28701', city: 'San Sebastián de los Reyes', province: 'Madrid' })[2]).toBe('28701 San Sebastián de los Reyes (Madrid)')
  })
})
