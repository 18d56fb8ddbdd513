import { performance } from 'node:perf_hooks'
import { pathToFileURL } from 'node:url'
import { fontNames, type FontName } from '@letters/contracts'
import type { Drawing } from '@letters/contracts'
import { addressLines, renderCard, renderEnvelope, type DesignToRender, type LetterToRender } from '../src/index.js'
import { cardMessage, frontJpeg, logoPng, sampleDesign } from '../test/samples.js'

/** The bench's messages: `length` characters of Spanish, different for every `index`. */
export { cardMessage }

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
  /** The drawing the letters are written in: the current one if absent; 4 for the glyphs as their fonts have them. */
  drawing?: Drawing
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

function letterNumber(index: number, messageLength: number, fonts: readonly FontName[], design: DesignToRender | undefined, drawing?: Drawing): LetterToRender {
  return {
    design,
    drawing,
    // A different hand per letter, as on the floor.
    letterId: `00000000-0000-4000-8000-${index.toString().padStart(12, '0')}`,
    code: 'BENCH00001',
    fontName: fonts[index % fonts.length]!,
    message: cardMessage(messageLength, index),
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
  const { letters = 1000, warmup = 200, messageLength = 600, fonts = fontNames, designed = false, drawing } = options
  const design = designed ? await benchDesign() : undefined
  for (let index = 0; index < warmup; index++) {
    const letter = letterNumber(index, messageLength, fonts, design, drawing)
    await renderCard(letter)
    await renderEnvelope(letter)
  }
  const started = performance.now()
  const cpuBefore = process.cpuUsage()
  for (let index = 0; index < letters; index++) {
    const letter = letterNumber(warmup + index, messageLength, fonts, design, drawing)
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

// node --import tsx packages/render/bench/render-throughput.ts [letters] [warm-up] [--designed] [--drawing-4]
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const args = process.argv.slice(2)
  const designed = args.includes('--designed')
  const drawing = args.includes('--drawing-4') ? 4 : undefined
  const [letters, warmup] = args.filter((arg) => !arg.startsWith('--')).map(Number)
  const result = await measureRenderThroughput({ letters: letters || undefined, warmup: Number.isInteger(warmup) ? warmup : undefined, designed, drawing })
  // The command's answer, for a person at a terminal: not a log line.
  process.stdout.write(
    `${result.letters} ${designed ? 'designed letters (card with its front page + envelope with a logo' : 'letters (card + envelope'}, 600 characters) in ${result.seconds.toFixed(2)} s (${result.cpuSeconds.toFixed(2)} s of CPU): ` +
      `${result.lettersPerSecond.toFixed(1)} letters/s, ${result.lettersPerCpuSecond.toFixed(1)} per CPU second, ${result.msPerLetter.toFixed(2)} ms each\n`,
  )
}
