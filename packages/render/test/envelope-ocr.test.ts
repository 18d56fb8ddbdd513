import { availableParallelism } from 'node:os'
import { beforeAll, describe, expect, it } from 'vitest'
import { recipientBlock, type BlockAddress } from '@letters/address'
import { fontNames, type FontName } from '@letters/contracts'
import { OCR_DPI, OCR_LANGUAGES, closestReading, inTurns, ocrRegion, recipientRegion } from '@letters/test/support/ocr'
import { envelopeOf, renderEnvelope, type LetterToRender } from '../src/index.js'
import { sampleDesign } from './samples.js'

/** The floor's country (FLOOR_COUNTRY): its own mail carries no country line. */
const FLOOR_COUNTRY = 'ES'

/**
 * An envelope to each kind of block the floor writes: a Spanish one at home, and two abroad in
 * their destination's layout (recipientBlock). `read` is what the post's machines must read on
 * it: the postal code, the town and, abroad, the country line.
 */
const envelopes: Array<{ name: string; letterId: string; address: BlockAddress; read: string[] }> = [
  {
    name: 'Spanish',
    letterId: '5d0b7f1e-2c3a-4b4d-8e5f-6a7b8c9d0e11',
    address: { name: 'Lucía', surname: 'García', company: null, address: 'Calle Mayor 1', zip: '28013', city: 'Madrid', province: 'Madrid', country: 'ES' },
    read: ['28013', 'Madrid'],
  },
  {
    name: 'US',
    letterId: '7e1c8a2f-3d4b-4c5e-9f60-7b8c9d0e1f22',
    address: {
      name: 'John',
      surname: 'Smith',
      company: null,
      address: '1600 Pennsylvania Avenue NW',
      zip: '20500',
      city: 'Washington',
      province: 'DC',
      country: 'US',
    },
    read: ['20500', 'WASHINGTON', 'ESTADOS UNIDOS'],
  },
  {
    name: 'UK',
    letterId: '9f2d9b3a-4e5c-4d6f-a071-8c9d0e1f2a33',
    address: { name: 'Oliver', surname: 'Brown', company: null, address: '10 Downing Street', zip: 'SW1A 2AA', city: 'London', province: null, country: 'GB' },
    read: ['SW1A 2AA', 'LONDON', 'REINO UNIDO'],
  },
]

/** At most this many characters read wrong in each: a code or a town one character off is still found in the post's lists. */
const MAX_WRONG = 1

const envelopeOfHand = (fontName: FontName, envelope: (typeof envelopes)[number]): LetterToRender => ({
  letterId: envelope.letterId,
  code: 'BTC0VS66R9',
  fontName,
  message: 'Gracias por todo.',
  signature: 'Ana',
  recipientLines: recipientBlock(envelope.address, FLOOR_COUNTRY),
  senderLines: ['Papelería Luna'],
  design: sampleDesign({ front: null, logo: null }),
})

/** Per hand, per envelope: each thing the post reads, and what tesseract read for it. */
const readings = new Map<FontName, Array<{ envelope: string; expected: string; read: string; wrong: number }>>()

describe(`the recipient block, rendered at ${OCR_DPI} dpi and read by tesseract (${OCR_LANGUAGES})`, () => {
  beforeAll(async () => {
    const jobs = fontNames.flatMap((fontName) => envelopes.map((envelope) => ({ fontName, envelope })))
    // Two pages at a time at most, each tesseract on one thread: other test files run beside this one.
    const read = await inTurns(jobs, Math.max(1, Math.min(2, availableParallelism() - 1)), async ({ fontName, envelope }) => {
      const letter = envelopeOfHand(fontName, envelope)
      return ocrRegion(await renderEnvelope(letter), recipientRegion(envelopeOf(letter)))
    })
    jobs.forEach(({ fontName, envelope }, index) => {
      const checks = envelope.read.map((expected) => {
        const { distance, read: found } = closestReading(read[index]!, expected)
        return { envelope: envelope.name, expected, read: found, wrong: distance }
      })
      readings.set(fontName, [...(readings.get(fontName) ?? []), ...checks])
    })
    const all = [...readings.values()].flat()
    const rows = [...readings].map(
      ([fontName, checks]) =>
        `${fontName.padEnd(15)} ${checks.map((check) => `${check.expected} → ${JSON.stringify(check.read)} (${check.wrong})`).join('  ')}`,
    )
    console.log(`${all.filter((check) => check.wrong <= MAX_WRONG).length} of ${all.length} read with at most ${MAX_WRONG} wrong:\n${rows.join('\n')}`)
  }, 240_000)

  it.each(fontNames)(
    'in %s, a Spanish, a US and a UK envelope each read back their postal code, town and country line with at most one character wrong',
    (fontName) => {
      const misread = readings.get(fontName)!.filter((check) => check.wrong > MAX_WRONG)
      expect(misread.map((check) => `${check.envelope}: ${check.expected} read as ${JSON.stringify(check.read)}`)).toEqual([])
    },
  )
})
