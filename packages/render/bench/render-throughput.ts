import { performance } from 'node:perf_hooks'
import { pathToFileURL } from 'node:url'
import { fontNames, type FontName } from '@letters/contracts'
import { addressLines, renderCard, renderEnvelope, type DesignToRender, type LetterToRender } from '../src/index.js'
import { seededRandom } from '../src/random.js'
import { frontJpeg, logoPng, sampleDesign } from '../test/samples.js'

const words = (
  'Querida Lucía: muchas gracias por venir a la inauguración de la tienda el sábado pasado. Nos hizo muchísima ilusión verte allí con tu familia, ¡y qué bien lo pasamos! ' +
  '¿Te acuerdas de la mesa de papel japonés? Ya tenemos los sobres a juego que preguntaste, en azul y en verde. Si te apetece pasar a verlos, estaremos encantados. ' +
  'Un abrazo muy fuerte para Marta y los niños; esperamos veros pronto por Sevilla, quizá en primavera, cuando los naranjos están en flor y las tardes son largas.'
).split(' ')

/**
 * A card's worth of Spanish, `length` characters, different for every letter (the same words in
 * another order): each letter is laid out afresh, as on the floor, while its words recur as a
 * language's do.
 */
function messageOf(index: number, length: number): string {
  const random = seededRandom(`message ${index}`)
  let message = ''
  while (message.length < length) message += `${words[Math.floor(random() * words.length)]} `
  return message.slice(0, length)
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
  /**
   * Letters with a design: an A6 card printed with its front (a 1819 × 1311 px JPEG, the card and
   * its bleed at 300 dpi: the card's file has the front page and the writing page), signed with a
   * signature's paths, in a C6 envelope with a logo and a return address. Without: letters as
   * accepted before designs (one page each).
   */
  designed?: boolean
}

export interface RenderThroughput {
  letters: number
  /** Wall-clock time. */
  seconds: number
  /** The CPU time the process spent meanwhile (drawing, and the collector's own threads). */
  cpuSeconds: number
  /** Card and envelope drawn one after the other on this thread, per second of wall-clock time. */
  lettersPerSecond: number
  /**
   * Per second of CPU time: letters per second of one core, a figure that holds on a machine
   * whose cores are shared with other work (where the wall-clock one drops).
   */
  lettersPerCpuSecond: number
  msPerLetter: number
}

/** The design every designed letter carries: its images made once, as the production worker loads a design's once per batch. */
async function benchDesign(): Promise<DesignToRender> {
  return sampleDesign({ card: 'A6', envelope: 'C6', production: 'printed', front: await frontJpeg('A6'), logo: await logoPng() })
}

function letterNumber(index: number, messageLength: number, fonts: readonly FontName[], design: DesignToRender | undefined): LetterToRender {
  return {
    design,
    // A different hand per letter, as on the floor.
    letterId: `00000000-0000-4000-8000-${index.toString().padStart(12, '0')}`,
    code: 'BENCH00001',
    fontName: fonts[index % fonts.length]!,
    message: messageOf(index, messageLength),
    signature: 'Ana, de Papelería Luna',
    recipientLines: addressLines({
      name: 'Lucía',
      surname: 'García',
      company: null,
      address: 'Calle Mayor 1, 3.º izquierda',
      zip: '28013',
      city: 'Madrid',
      province: 'Madrid',
      countryName: 'España',
    }),
    senderLines: ['Papelería Luna', 'Calle Sierpes 4', '41004 Sevilla'],
  }
}

/** Draws the card and the envelope of `letters` letters on this thread and times it. */
export async function measureRenderThroughput(options: RenderThroughputOptions = {}): Promise<RenderThroughput> {
  // A render takes a few milliseconds: 20 letters of warm-up ended before the engine had compiled
  // the drawing code, and 200 measured ones took well under a second, both a matter of noise.
  const { letters = 1000, warmup = 200, messageLength = 600, fonts = fontNames, designed = false } = options
  const design = designed ? await benchDesign() : undefined
  for (let index = 0; index < warmup; index++) {
    const letter = letterNumber(index, messageLength, fonts, design)
    await renderCard(letter)
    await renderEnvelope(letter)
  }
  const started = performance.now()
  const cpuBefore = process.cpuUsage()
  for (let index = 0; index < letters; index++) {
    const letter = letterNumber(warmup + index, messageLength, fonts, design)
    await renderCard(letter)
    await renderEnvelope(letter)
  }
  const seconds = (performance.now() - started) / 1000
  const cpu = process.cpuUsage(cpuBefore)
  const cpuSeconds = (cpu.user + cpu.system) / 1e6
  return {
    letters,
    seconds,
    cpuSeconds,
    lettersPerSecond: letters / seconds,
    lettersPerCpuSecond: letters / cpuSeconds,
    msPerLetter: (seconds * 1000) / letters,
  }
}

// node --import tsx packages/render/bench/render-throughput.ts [letters] [warm-up] [--designed]
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const args = process.argv.slice(2)
  const designed = args.includes('--designed')
  const [letters, warmup] = args.filter((arg) => arg !== '--designed').map(Number)
  const result = await measureRenderThroughput({ letters: letters || undefined, warmup: Number.isInteger(warmup) ? warmup : undefined, designed })
  // The command's answer, for a person at a terminal: not a log line.
  process.stdout.write(
    `${result.letters} ${designed ? 'designed letters (card with its front page + envelope with a logo' : 'letters (card + envelope'}, 600 characters) in ${result.seconds.toFixed(2)} s (${result.cpuSeconds.toFixed(2)} s of CPU): ` +
      `${result.lettersPerSecond.toFixed(1)} letters/s, ${result.lettersPerCpuSecond.toFixed(1)} per CPU second, ${result.msPerLetter.toFixed(2)} ms each\n`,
  )
}
