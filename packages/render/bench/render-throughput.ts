import { performance } from 'node:perf_hooks'
import { pathToFileURL } from 'node:url'
import { fontNames, type FontName } from '@letters/contracts'
import { addressLines, renderCard, renderEnvelope, type LetterToRender } from '../src/index.js'

/** A card's worth of Spanish, cut to the length the figure is quoted for. */
function messageOf(length: number): string {
  const paragraph =
    'Querida Lucía: muchas gracias por venir a la inauguración de la tienda el sábado pasado. Nos hizo muchísima ilusión verte allí con tu familia, ¡y qué bien lo pasamos! ' +
    '¿Te acuerdas de la mesa de papel japonés? Ya tenemos los sobres a juego que preguntaste, en azul y en verde. Si te apetece pasar a verlos, estaremos encantados. '
  return paragraph.repeat(Math.ceil(length / paragraph.length)).slice(0, length)
}

export interface RenderThroughputOptions {
  /** Letters measured, after the warm-up. */
  letters?: number
  /** Letters drawn first and not counted: the process's one-off costs (fonts, JIT) stay out of the figure. */
  warmup?: number
  /** Characters in each message. */
  messageLength?: number
  /** The fonts the letters take in turn. */
  fonts?: readonly FontName[]
}

export interface RenderThroughput {
  letters: number
  seconds: number
  /** Card and envelope drawn, one after the other on this thread: letters per second of one core. */
  lettersPerSecond: number
  msPerLetter: number
}

function letterNumber(index: number, message: string, fonts: readonly FontName[]): LetterToRender {
  return {
    // A different hand per letter, as on the floor.
    letterId: `00000000-0000-4000-8000-${index.toString().padStart(12, '0')}`,
    fontName: fonts[index % fonts.length]!,
    message,
    signature: 'Ana, de Papelería Luna',
    recipientLines: addressLines({ name: 'Lucía', surname: 'García', company: null, address: 'Calle Mayor 1, 3.º izquierda', zip: '28013', city: 'Madrid', province: 'Madrid', countryName: 'España' }),
    senderLines: ['Papelería Luna', 'Calle Sierpes 4', '41004 Sevilla'],
  }
}

/** Draws the card and the envelope of `letters` letters on this thread and times it. */
export async function measureRenderThroughput(options: RenderThroughputOptions = {}): Promise<RenderThroughput> {
  const { letters = 200, warmup = 20, messageLength = 600, fonts = fontNames } = options
  const message = messageOf(messageLength)
  for (let index = 0; index < warmup; index++) {
    const letter = letterNumber(index, message, fonts)
    await renderCard(letter)
    await renderEnvelope(letter)
  }
  const started = performance.now()
  for (let index = 0; index < letters; index++) {
    const letter = letterNumber(warmup + index, message, fonts)
    await renderCard(letter)
    await renderEnvelope(letter)
  }
  const seconds = (performance.now() - started) / 1000
  return { letters, seconds, lettersPerSecond: letters / seconds, msPerLetter: (seconds * 1000) / letters }
}

// node --import tsx packages/render/bench/render-throughput.ts [letters] [warm-up]
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [letters, warmup] = process.argv.slice(2).map(Number)
  const result = await measureRenderThroughput({ letters: letters || undefined, warmup: Number.isInteger(warmup) ? warmup : undefined })
  console.log(`${result.letters} letters (card + envelope, 600 characters) in ${result.seconds.toFixed(2)} s: ${result.lettersPerSecond.toFixed(1)} letters/s on one core, ${result.msPerLetter.toFixed(2)} ms each`)
}
