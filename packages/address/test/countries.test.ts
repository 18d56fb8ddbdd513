import { describe, expect, it } from 'vitest'
import countries from 'i18n-iso-countries'
import { COUNTRY_CODES } from '@letters/contracts'
import { isAssignedCountry, spanishCountryName } from '../src/index.js'

describe('the country codes a letter may be sent to', () => {
  it('are the codes whose Spanish names the envelopes print, no more and no fewer', () => {
    expect([...COUNTRY_CODES].sort()).toEqual(Object.keys(countries.getAlpha2Codes()).sort())
    for (const code of COUNTRY_CODES) expect(spanishCountryName(code), code).not.toBe('')
  })

  it('are taken in either case, and an unassigned code is not', () => {
    expect(['ES', 'es', 'Es', 'XK'].map(isAssignedCountry)).toEqual([true, true, true, true])
    expect(['AA', 'XX', 'ESP', '', 'E'].map(isAssignedCountry)).toEqual([false, false, false, false, false])
  })
})
