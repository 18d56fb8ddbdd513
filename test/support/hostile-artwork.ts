// Hostile artwork files for the tests that refuse them (hostile-artwork-refused, artwork-costs-bounded and the designs' tests),
// made here byte by byte, and a probe of the event loop the gateway (or the floor) answers on.
import { readFileSync } from 'node:fs'
import { performance } from 'node:perf_hooks'
import { deflateSync } from 'node:zlib'

const MM = 72 / 25.4

/** A PDF from its objects' bodies (numbered from 1, the first one the catalog), with a correct xref table. */
export function pdfOfObjects(objects: Array<string | Buffer>): Buffer {
  const parts: Buffer[] = [Buffer.from('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n', 'latin1')]
  const offsets: number[] = []
  let at = parts[0]!.length
  objects.forEach((body, index) => {
    const chunk = Buffer.concat([Buffer.from(`${index + 1} 0 obj\n`), Buffer.isBuffer(body) ? body : Buffer.from(body, 'latin1'), Buffer.from('\nendobj\n')])
    offsets.push(at)
    at += chunk.length
    parts.push(chunk)
  })
  const xref =
    `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n` +
    offsets.map((offset) => `${String(offset).padStart(10, '0')} 00000 n \n`).join('') +
    `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${at}\n%%EOF\n`
  parts.push(Buffer.from(xref, 'latin1'))
  return Buffer.concat(parts)
}

const streamObject = (dictionary: string, data: Buffer) =>
  Buffer.concat([Buffer.from(`<< ${dictionary} /Length ${data.length} >>\nstream\n`), data, Buffer.from('\nendstream')])

/**
 * A one-page A6 (with bleed) PDF carrying an object stream (/Type /ObjStm) that inflates to
 * `megabytes` MB of spaces: deflate packs it about 1000 to 1, so 0.3 MB on the wire is 300 MB
 * once inflated. pdf-lib inflates every object stream when it loads a file.
 */
export function objectStreamBombPdf(megabytes: number): Buffer {
  const inflated = Buffer.alloc(megabytes * 1024 * 1024, 0x20)
  inflated.write('10 0 ', 0)
  const box = `[0 0 ${(154 * MM).toFixed(2)} ${(111 * MM).toFixed(2)}]`
  return pdfOfObjects([
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    `<< /Type /Page /Parent 2 0 R /MediaBox ${box} >>`,
    streamObject('/Type /ObjStm /N 1 /First 5 /Filter /FlateDecode', deflateSync(inflated, { level: 9 })),
  ])
}

const SVG_NS = 'xmlns="http://www.w3.org/2000/svg"'

/** `depth` nested <g> around one stroke: a signature (or logo) of a few hundred KB. */
export const nestedGroupsSvg = (depth: number) =>
  `<svg ${SVG_NS} viewBox="0 0 120 40">${'<g>'.repeat(depth)}<path d="M0 0 L10 10"/>${'</g>'.repeat(depth)}</svg>`

/** A signature of `count` subpaths, each a short stroke: what a signature pad's raw export can look like. */
export function manyStrokesSignatureSvg(count: number): string {
  const strokes: string[] = []
  for (let n = 0; n < count; n++) strokes.push(`M${(n * 7) % 120} ${(n * 13) % 40}l1 1`)
  return `<svg ${SVG_NS} viewBox="0 0 120 40"><path d="${strokes.join('')}"/></svg>`
}

/** A 116-byte signature: one cubic curve whose control points lie at ±`far` (finite numbers, accepted as they are). */
export const farControlPointsSignatureSvg = (far: string) =>
  `<svg ${SVG_NS} viewBox="0 0 120 40"><path d="M10 10 C ${far} ${far} -${far} -${far} 100 30"/></svg>`

/** A 208-byte A6 card front: one rectangle through an feMorphology filter, which librsvg draws pixel by pixel over the whole radius. */
export const morphologyCardSvg = (radius: number) =>
  `<svg ${SVG_NS} viewBox="0 0 154 111"><filter id="f" x="-10" y="-10" width="20" height="20"><feMorphology radius="${radius}"/></filter><rect width="154" height="111" filter="url(#f)"/></svg>`

/** Milliseconds this process's main thread (the event loop's) has run on a CPU, from Linux's scheduler statistics. */
export function loopThreadCpuMs(): number {
  return Number(readFileSync(`/proc/${process.pid}/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6
}

/**
 * Watches an event loop from inside it: the longest gap between two 5 ms ticks while `work` ran
 * (a synchronous parse shows as one long gap), the CPU time its thread spent meanwhile (which a
 * busy machine does not lengthen, and which bounds any stall of the loop's own making), and the
 * highest RSS sampled.
 */
export async function probeEventLoop<T>(work: () => Promise<T>): Promise<{ result: T; ms: number; stallMs: number; loopCpuMs: number; rssGrowthMb: number }> {
  const rss0 = process.memoryUsage().rss
  let peak = rss0
  let longest = 0
  let last = performance.now()
  const tick = setInterval(() => {
    const now = performance.now()
    longest = Math.max(longest, now - last)
    last = now
    peak = Math.max(peak, process.memoryUsage().rss)
  }, 5)
  const started = performance.now()
  const cpu0 = loopThreadCpuMs()
  try {
    const result = await work()
    const ms = performance.now() - started
    // One more tick, so a block that ended the work is measured too.
    await new Promise((resolve) => setTimeout(resolve, 20))
    return {
      result,
      ms: Math.round(ms),
      stallMs: Math.round(longest),
      loopCpuMs: Math.round(loopThreadCpuMs() - cpu0),
      rssGrowthMb: Math.round((peak - rss0) / 1e6),
    }
  } finally {
    clearInterval(tick)
  }
}
