import { spawn } from 'node:child_process'
import { MM, type EnvelopeGeometry } from '@letters/render'

/** The resolution a page is scanned at for OCR: a PDF page is read as a 300 dpi scan of it. */
export const OCR_DPI = 300

/**
 * Tesseract's models for an envelope: Spanish for the floor's own mail and the country lines
 * ("ESTADOS UNIDOS", "REINO UNIDO"), English for what a letter abroad carries in its
 * destination's language and forms (towns, streets, a UK postcode). Spanish alone reads the A of
 * a postcode's "2AA" after a digit as a 4.
 */
export const OCR_LANGUAGES = 'spa+eng'

/** How long one tool may take on one page, on a busy machine. */
const TOOL_TIMEOUT_MS = 60_000

/** Runs a command with `input` on its stdin; its stdout, or an error with its stderr. */
function run(command: string, args: string[], input: Uint8Array, env?: NodeJS.ProcessEnv): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ...env } })
    const stdout: Buffer[] = []
    let stderr = ''
    const timer = setTimeout(() => child.kill('SIGKILL'), TOOL_TIMEOUT_MS)
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk))
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')))
    child.on('error', (error) => {
      clearTimeout(timer)
      reject(error)
    })
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      if (code === 0) resolve(Buffer.concat(stdout))
      else reject(new Error(`${command} ${args.join(' ')} ended with ${code ?? signal}: ${stderr.trim()}`))
    })
    child.stdin.end(input)
  })
}

/** A part of a page, in points from its top left corner. */
export interface Region {
  x: number
  y: number
  width: number
  height: number
}

/**
 * Where a sorting machine finds the recipient's block on an envelope: the block's box, widened by
 * what a hand's lines may stray from it (a line starting left of the margin, a swash), short of
 * the letter's code at the bottom left and of the sender's corner above.
 */
export function recipientRegion(envelope: EnvelopeGeometry): Region {
  const { recipient, size } = envelope
  const x = recipient.x - 3 * MM
  const y = recipient.y - 2 * MM
  return { x, y, width: size.width - x, height: size.height - y }
}

/**
 * What tesseract reads, line by line, in `region` of a PDF's first page rendered by pdftoppm at
 * OCR_DPI, as a sorting machine reads the address block it has found. One thread per tesseract
 * (OMP_THREAD_LIMIT): the caller decides how many pages are read at once.
 */
export async function ocrRegion(pdf: Uint8Array, region: Region): Promise<string[]> {
  const pixels = (points: number) => String(Math.round((points / 72) * OCR_DPI))
  const crop = ['-x', pixels(region.x), '-y', pixels(region.y), '-W', pixels(region.width), '-H', pixels(region.height)]
  const png = await run('pdftoppm', ['-png', '-gray', '-r', String(OCR_DPI), '-f', '1', '-l', '1', ...crop, '-singlefile', '-'], pdf)
  const text = await run('tesseract', ['stdin', 'stdout', '-l', OCR_LANGUAGES, '--psm', '6'], png, { OMP_THREAD_LIMIT: '1' })
  return text
    .toString('utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
}

/**
 * How closely `expected` was read: the fewest characters inserted, deleted or changed (case
 * aside: the post reads capitals and small letters alike) that turn some stretch of one line
 * read into it, and that stretch. Nothing like it read counts every character.
 */
export function closestReading(lines: string[], expected: string): { distance: number; read: string } {
  const want = [...expected.toUpperCase()]
  let best = { distance: want.length, read: '' }
  for (const line of lines) {
    const got = [...line].map((character) => character.toUpperCase())
    // The edit distance to the stretch of the line ending at each character (a stretch may start
    // anywhere: the first row is all zeros), and where that stretch starts.
    let previous = got.map(() => 0).concat(0)
    let starts = previous.map((_, index) => index)
    for (let i = 1; i <= want.length; i++) {
      const current = [i]
      const currentStarts = [0]
      for (let j = 1; j <= got.length; j++) {
        const options: Array<[number, number]> = [
          [previous[j - 1]! + (want[i - 1] === got[j - 1] ? 0 : 1), starts[j - 1]!],
          [previous[j]! + 1, starts[j]!],
          [current[j - 1]! + 1, currentStarts[j - 1]!],
        ]
        const [cost, start] = options.reduce((a, b) => (b[0] < a[0] ? b : a))
        current.push(cost)
        currentStarts.push(start)
      }
      previous = current
      starts = currentStarts
    }
    previous.forEach((distance, end) => {
      if (distance < best.distance) best = { distance, read: [...line].slice(starts[end], end).join('') }
    })
  }
  return best
}

/** Runs `work` on each item, at most `limit` at a time; the results in the items' order. */
export async function inTurns<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length)
  let next = 0
  const worker = async () => {
    while (next < items.length) {
      const index = next++
      results[index] = await work(items[index]!)
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
  return results
}
