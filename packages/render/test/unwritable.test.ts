import { describe, expect, it } from 'vitest'
import { fontNames } from '@letters/contracts'
import { unwritableCharacters } from '../src/index.js'

describe('unwritableCharacters', () => {
  it('finds nothing missing in Spanish, French and German text, in every font', () => {
    for (const font of fontNames) expect(unwritableCharacters(font, '¡Hola, Begoña! ¿Qué tal? «Çà et là», Müller & Œuvre — 20 € … “adiós”'), font).toEqual([])
  })

  it('names each character a font has no glyph for once, in order, and ignores white space and joiners', () => {
    expect(unwritableCharacters('caveat', '王 伟\n王 👍\u200d a\u00ad\tb')).toEqual(['王', '伟', '👍'])
    expect(unwritableCharacters('kalam', 'Łódź')).toEqual(['Ł', 'ź'])
  })
})
