import { describe, expect, it } from 'vitest'
import { compact, pdfTextBoxes, pdfText as textOf } from '@letters/test/support/pdf'
import { fontNames } from '@letters/contracts'
import { MESSAGE_BOX, MIN_FONT_SIZE, addressLines, cardLayout, renderCard, renderEnvelope, renderProof, type LetterToRender } from '../src/index.js'
import { sampleRecipient } from '@letters/test/support/factories'

const letter: LetterToRender = {
  letterId: '3f0c6a52-8d0e-4c55-9d5e-5b1f0c1f2a10',
  code: 'BTC0VS66R9',
  fontName: 'caveat',
  message: '¡Hola, Lucía! Gracias por confiar en nosotros. ¿Nos vemos en Sevilla?',
  signature: 'Ana, de Papelería Luna',
  recipientLines: addressLines({ ...sampleRecipient, countryName: 'España' }),
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
    const message = Array.from({ length: 120 }, (_, i) => `palabra${i % 10}`)
      .join(' ')
      .slice(0, 1000)
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
    expect(cardLayout({ fontName: 'caveat', message: 'Gracias' }).size).toBeGreaterThan(
      cardLayout({ fontName: 'caveat', message: 'palabra '.repeat(120) }).size,
    )
  })

  it.each(fontNames)('writes in %s', async (fontName) => {
    const { text } = await textOf(await renderCard({ ...letter, fontName }))
    expect(text).toContain(compact(letter.message))
  })
})

/** Every glyph of every page lies whole on the page: nothing is printed cut off at an edge. */
async function expectNothingCutOff(pdf: Buffer, label: string) {
  const pages = await pdfTextBoxes(pdf)
  for (const page of pages) {
    const outside = page.boxes.filter((box) => box.x < 0 || box.x + box.width > page.width || box.y < 0 || box.y > page.height)
    expect(
      outside.map((box) => `${box.text}@${Math.round(box.x)},${Math.round(box.y)}`),
      `${label}: glyphs off a ${Math.round(page.width)}×${Math.round(page.height)} page`,
    ).toEqual([])
  }
}

describe('nothing written runs off the card or the envelope', () => {
  const longWord = 'Supercalifragilísticoespialidoso'.repeat(32).slice(0, 1000)

  it.each(fontNames)('breaks a 1,000-character word across lines in %s, losing nothing', async (fontName) => {
    expect(longWord).toHaveLength(1000)
    const pdf = await renderCard({ ...letter, fontName, message: longWord })
    await expectNothingCutOff(pdf, fontName)
    expect((await textOf(pdf)).text).toContain(compact(longWord))
    const layout = cardLayout({ fontName, message: longWord })
    expect(layout.lines.length).toBeGreaterThan(1)
    expect(layout.lines.join('')).toBe(longWord)
    expect(layout.lines.length * layout.size * layout.lineHeight).toBeLessThanOrEqual(MESSAGE_BOX.height)
  })

  it('keeps a long word whole on a line of its own when it fits there, and breaks it only when it does not', () => {
    const fits = `Hola ${'a'.repeat(30)} adiós`
    expect(cardLayout({ fontName: 'caveat', message: fits }).lines.join(' ')).toBe(fits)
  })

  it.each(fontNames)('writes a message of 200 short lines in %s as one paragraph rather than past the bottom', async (fontName) => {
    const message = 'Hola\n'.repeat(200).slice(0, 999)
    const layout = cardLayout({ fontName, message })
    expect(layout.lines.length * layout.size * layout.lineHeight).toBeLessThanOrEqual(MESSAGE_BOX.height)
    await expectNothingCutOff(await renderCard({ ...letter, fontName, message }), fontName)
  })

  it('keeps the line breaks of a message that fits with them', () => {
    expect(cardLayout({ fontName: 'caveat', message: 'Querida Lucía:\n\nGracias.\nAna' }).lines).toEqual(['Querida Lucía:', '', 'Gracias.', 'Ana'])
  })

  it('fits a 200-character sender name in the signature strip', async () => {
    const signature = 'Papelería y Librería Hermanos García de la Fuente, Sociedad Limitada, '.repeat(3).slice(0, 200)
    const pdf = await renderCard({ ...letter, signature })
    await expectNothingCutOff(pdf, 'signature')
    expect((await textOf(pdf)).text).toContain(compact(signature))
  })

  it('breaks an address of one 200-character word on the envelope', async () => {
    const street = 'Calle'.padEnd(200, 'x')
    const pdf = await renderEnvelope({ ...letter, recipientLines: ['Lucía García', street, '28013 Madrid'], senderLines: ['Remitente'.padEnd(200, 'z')] })
    await expectNothingCutOff(pdf, 'envelope')
    expect((await textOf(pdf)).text).toContain(street)
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
    expect(
      addressLines({ name: 'Ana', surname: 'Ruiz', company: 'Luna S.L.', address: 'Calle Sierpes 4', zip: '08001', city: 'Barcelona', province: 'Barcelona' }),
    ).toEqual(['Ana Ruiz', 'Luna S.L.', 'Calle Sierpes 4', '08001 Barcelona'])
    expect(
      addressLines({
        name: 'Ana',
        surname: 'Ruiz',
        company: null,
        address: 'Calle Real 2',
        zip: '28701',
        city: 'San Sebastián de los Reyes',
        province: 'Madrid',
      })[2],
    ).toBe('28701 San Sebastián de los Reyes (Madrid)')
  })
})
