import { describe, expect, it } from 'vitest'
import { compact, pdfText } from '@letters/test/support/pdf'
import { renderCard, type LetterToRender } from '../src/index.js'

// Alone in its file, so that its process has drawn nothing before (vitest runs each file afresh).
describe('a process shares its parsed fonts between documents', () => {
  it('writes a letter the same whatever the process drew before: a glyph first met inside an accented one keeps its text', async () => {
    const letter: LetterToRender = {
      letterId: '5b0e8f52-1c2d-4e3f-9a4b-6c7d8e9f0a1b',
      code: 'Q90DQSTMNQ',
      fontName: 'caveat',
      message: 'Una uva',
      signature: 'Ana',
      recipientLines: ['Lucía García', 'Calle Mayor 1', '28013 Madrid'],
      senderLines: ['Ana'],
    }
    // Caveat draws Ú as its U and an accent: embedding Ú reads the U glyph, with no character.
    await renderCard({ ...letter, letterId: '0f1e2d3c-4b5a-4697-8877-665544332211', message: 'Ú' })
    expect(compact((await pdfText(await renderCard(letter))).text)).toContain('Unauva')
  })
})
