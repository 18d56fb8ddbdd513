import { fork, type ChildProcess } from 'node:child_process'
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { moduleLaunch, untrustedChildEnvironment } from '@letters/config'
import { FONT_MAX_BYTES, fontContentTypes, mediaType, type FontContentType } from '@letters/contracts'
import { checkFontContainer, size } from './font-tables.js'
import type { ChildMessage, FontJob } from './font-child.js'
import { FONT_READ_HEAP_MB, FONT_READ_MAX_RSS_MB, FONT_READ_TIMEOUT_MS, FONT_READERS } from './limits.js'
import { isRefusal, num, refusal, RefusedError, type Refusal } from './refusal.js'

/** An accepted font file: what to keep of it, the font the renderer parses, and its preview. */
export interface InspectedFont {
  contentType: FontContentType
  /** The upload's size and hash, as the API reports the version. */
  bytes: number
  sha256: string
  /**
   * The font the renderer parses with fontkit: a plain TrueType/OpenType (sfnt) file. A WOFF's
   * tables inflated (fontkit would inflate a WOFF table again at every access); a WOFF2, a TTF
   * or an OTF as uploaded.
   */
  face: Buffer
  /** A PNG at most PREVIEW_MAX_WIDTH px wide of a Spanish sample sentence written in the font, dark ink on white. */
  preview: Buffer
  /** The family name the font's own name table gives, or null. */
  familyName: string | null
}

const kinds: Record<FontContentType, string> = {
  'font/ttf': 'una fuente TrueType (TTF)',
  'font/otf': 'una fuente OpenType (OTF)',
  'font/woff': 'una fuente WOFF',
  'font/woff2': 'una fuente WOFF2',
}

const signatures: Record<FontContentType, string> = {
  'font/ttf': '00 01 00 00 o «true»',
  'font/otf': '«OTTO»',
  'font/woff': '«wOFF»',
  'font/woff2': '«wOF2»',
}

const accepted = `${fontContentTypes.slice(0, -1).join(', ')} o ${fontContentTypes.at(-1)}`

/**
 * Checks an account's uploaded font file and makes the font the renderer parses and its preview.
 * The headers are read here; the font itself is parsed in a process of its own, under a time
 * and a memory limit (see readInChild), as a hostile font can be built to exhaust either. A
 * client's mistake is a Refusal (in Spanish, saying what is wrong and what is expected); only
 * our own faults throw.
 */
export async function inspectFont(
  input: { contentType: string; data: Uint8Array },
  /** Aborted when nobody waits for the answer any more: a read not yet begun never begins, one under way is stopped. */
  signal?: AbortSignal,
): Promise<InspectedFont | Refusal> {
  const data = Buffer.isBuffer(input.data) ? input.data : Buffer.from(input.data.buffer, input.data.byteOffset, input.data.byteLength)
  if (data.length > FONT_MAX_BYTES)
    return refusal(
      413,
      `La fuente ocupa ${size(data.length)} (${num(data.length)} bytes): el máximo es ${size(FONT_MAX_BYTES)} (${num(FONT_MAX_BYTES)} bytes). Una fuente de escritura a mano ocupa menos de 1 MB.`,
    )
  if (data.length === 0) return refusal(400, 'El archivo está vacío: envía la fuente como TTF, OTF, WOFF o WOFF2.')
  // A request without the header arrives as undefined whatever the type says.
  const declared = String(input.contentType ?? '').trim()
  const contentType = normalizeContentType(declared)
  const sniffed = sniff(data)
  if (!contentType) {
    const hint = sniffed && sniffed in kinds ? ` Este archivo parece ${kinds[sniffed as FontContentType]}: envíalo como ${sniffed}.` : ''
    return refusal(
      415,
      `El tipo de contenido ${declared ? `«${declared.slice(0, 80)}»` : '(vacío)'} no se admite para una fuente: envía el archivo como ${accepted}.${hint}`,
    )
  }
  if (sniffed !== contentType) return refusal(400, mismatchMessage(contentType, sniffed))

  try {
    checkFontContainer(contentType, data)
    const read = await readInChild({ contentType, data }, signal)
    if (isRefusal(read)) return read
    return { contentType, bytes: data.length, sha256: createHash('sha256').update(data).digest('hex'), ...read }
  } catch (error) {
    if (error instanceof RefusedError) return error.refusal
    throw error
  }
}

/** The declared type, if it is a font's. */
function normalizeContentType(value: string): FontContentType | null {
  const type = mediaType(value)
  return (fontContentTypes as readonly string[]).includes(type) ? (type as FontContentType) : null
}

type Sniffed = FontContentType | 'ttc' | 'zip' | 'type1' | 'pdf' | 'png' | 'jpeg' | 'gif' | 'xml' | null

/** What the bytes are, from their first bytes: the content type is the client's claim, this is the file's. */
function sniff(data: Buffer): Sniffed {
  const head = data.subarray(0, 4).toString('latin1')
  if (head === '\x00\x01\x00\x00' || head === 'true') return 'font/ttf'
  if (head === 'OTTO') return 'font/otf'
  if (head === 'wOFF') return 'font/woff'
  if (head === 'wOF2') return 'font/woff2'
  if (head === 'ttcf') return 'ttc'
  if (head === 'PK\x03\x04') return 'zip'
  if ((data[0] === 0x80 && data[1] === 0x01) || data.subarray(0, 10).toString('latin1') === '%!PS-Adobe' || head === '%!Fo') return 'type1'
  if (data.subarray(0, 5).toString('latin1') === '%PDF-') return 'pdf'
  if (head === '\x89PNG') return 'png'
  if (data[0] === 0xff && data[1] === 0xd8 && data[2] === 0xff) return 'jpeg'
  if (head === 'GIF8') return 'gif'
  if (data.subarray(0, 64).toString('latin1').trimStart().startsWith('<')) return 'xml'
  return null
}

const sniffedNames: Record<Exclude<Sniffed, FontContentType | null>, string> = {
  ttc: 'una colección de fuentes (TTC), que no se admite: envía una sola fuente como TTF u OTF',
  zip: 'un archivo ZIP: descomprímelo y envía la fuente que contiene',
  type1: 'una fuente PostScript Type 1, que no se admite: conviértela a OTF o TTF',
  pdf: 'un PDF, no una fuente',
  png: 'una imagen PNG, no una fuente',
  jpeg: 'una imagen JPEG, no una fuente',
  gif: 'una imagen GIF, no una fuente',
  xml: 'un documento XML o SVG, no una fuente: una fuente SVG no se admite, conviértela a OTF o TTF',
}

function mismatchMessage(declared: FontContentType, sniffed: Sniffed): string {
  const claim = `El archivo se ha enviado como ${declared}, pero su contenido no es ${kinds[declared]}`
  if (sniffed === null)
    return `${claim}: no empieza por ${signatures[declared]}, la firma de ese formato. Envía un archivo TTF, OTF, WOFF o WOFF2, con su tipo.`
  if (sniffed in kinds) return `${claim}: parece ${kinds[sniffed as FontContentType]}. Envíalo con el tipo ${sniffed}.`
  return `${claim}: parece ${sniffedNames[sniffed as keyof typeof sniffedNames]}.`
}

/** The process that parses a font: the entry module, and the flags that let it load (moduleLaunch), under our own heap limit and with none of the parent's secrets. */
function childSetup(): { modulePath: string; execArgv: string[]; env: NodeJS.ProcessEnv } {
  // The heap's limit is ours to set: the parent's own (a gateway's, a test runner's) is dropped.
  const inherited = process.execArgv.filter((flag) => !flag.startsWith('--max-old-space-size'))
  const { url, execArgv, env } = moduleLaunch(import.meta.url, 'font-child', { execArgv: inherited, env: untrustedChildEnvironment() })
  return { modulePath: fileURLToPath(url), execArgv: [...execArgv, `--max-old-space-size=${FONT_READ_HEAP_MB}`], env }
}

let reading = 0
const waiting: Array<() => void> = []

/** Runs `task` when fewer than FONT_READERS fonts are being parsed: each parse is a process of up to FONT_READ_MAX_RSS_MB. */
async function inTurn<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
  signal?.throwIfAborted()
  if (reading >= FONT_READERS) await turn(signal)
  else reading++
  try {
    return await task()
  } finally {
    // The turn passes to the next in line as it is; only when none waits is it given back.
    const next = waiting.shift()
    if (next) next()
    else reading--
  }
}

/**
 * The font reader could not start, or ended before it asked for the file: nothing of the font was
 * read, so the fault is ours and the same upload may be sent again.
 */
export class FontReaderUnavailableError extends Error {
  override name = 'FontReaderUnavailableError'
}

/** How long a child may take to load its modules before we count it as our fault: loading is ours, not the font's. */
const CHILD_START_TIMEOUT_MS = 60_000
/** How often the child's resident memory is read. */
const RSS_POLL_MS = 20

type FontRead = Pick<InspectedFont, 'face' | 'preview' | 'familyName'>

/** Waits in line for a reader; one given up on (`signal`) leaves the line at once, and is never handed a turn. */
function turn(signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const handed = () => {
      signal?.removeEventListener('abort', leave)
      resolve()
    }
    const leave = () => {
      waiting.splice(waiting.indexOf(handed), 1)
      reject(new Error('The font read was given up on while it waited', { cause: signal!.reason }))
    }
    waiting.push(handed)
    signal?.addEventListener('abort', leave, { once: true })
  })
}

/**
 * Parses the font in a child process (font-child.ts) and returns what it made, or its refusal. The
 * child gets the file once it has loaded, and from then on FONT_READ_TIMEOUT_MS: past that it is
 * killed (SIGKILL), as it is when its heap passes FONT_READ_HEAP_MB (V8 ends it) or its whole
 * memory passes FONT_READ_MAX_RSS_MB (read from /proc, where there is one). A child that ends
 * without an answer after it had the file was ended by the file: that is a refusal. One that
 * cannot start, or ends before asking for the file, is our fault: FontReaderUnavailableError.
 */
function readInChild(job: FontJob, stop?: AbortSignal): Promise<FontRead | Refusal> {
  return inTurn(
    () =>
      new Promise((resolve, reject) => {
        const setup = childSetup()
        const child: ChildProcess = fork(setup.modulePath, [], {
          execArgv: setup.execArgv,
          env: setup.env,
          serialization: 'advanced',
          stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
        })
        let stderr = ''
        child.stderr!.on('data', (chunk: Buffer) => {
          stderr = (stderr + chunk.toString('utf8')).slice(-4000)
        })
        let started = false
        let ended: 'time' | 'memory' | null = null
        let settled = false
        const settle = (outcome: () => void) => {
          if (settled) return
          settled = true
          clearTimeout(timer)
          clearInterval(watch)
          stop?.removeEventListener('abort', stopped)
          child.kill('SIGKILL')
          outcome()
        }
        // Nobody waits for this read any more: the child is ended, and its turn passes on.
        const stopped = () => settle(() => reject(new Error('The font read was stopped: nobody waits for it', { cause: stop!.reason })))
        stop?.addEventListener('abort', stopped, { once: true })
        let timer = setTimeout(
          () => settle(() => reject(new FontReaderUnavailableError(`The font reader did not start within ${CHILD_START_TIMEOUT_MS} ms: ${stderr.trim()}`))),
          CHILD_START_TIMEOUT_MS,
        )
        const watch = setInterval(() => {
          if (child.pid === undefined || residentMb(child.pid) <= FONT_READ_MAX_RSS_MB) return
          ended = 'memory'
          child.kill('SIGKILL')
        }, RSS_POLL_MS)

        child.on('error', (error) =>
          settle(() => reject(started ? error : new FontReaderUnavailableError(`The font reader did not start: ${error.message}`, { cause: error }))),
        )
        child.on('message', (message: ChildMessage) => {
          if ('ready' in message) {
            started = true
            clearTimeout(timer)
            timer = setTimeout(() => {
              ended = 'time'
              child.kill('SIGKILL')
            }, FONT_READ_TIMEOUT_MS)
            // A child that dies taking the file is answered by its exit, below.
            child.send(job, () => {})
          } else if ('refusal' in message) {
            settle(() => resolve(message.refusal))
          } else {
            const { face, preview, familyName } = message.read
            settle(() => resolve({ face: asBuffer(face), preview: asBuffer(preview), familyName }))
          }
        })
        child.on('exit', (code, signal) => {
          if (!started)
            return settle(() =>
              reject(new FontReaderUnavailableError(`The font reader ended before it started (${signal ?? `exit code ${code}`}): ${stderr.trim()}`)),
            )
          settle(() => resolve(refusal(400, beyondLimits(ended, stderr))))
        })
      }),
    stop,
  )
}

function beyondLimits(ended: 'time' | 'memory' | null, stderr: string): string {
  const why =
    ended === 'time'
      ? `leerla llevaba más de ${num(FONT_READ_TIMEOUT_MS / 1000)} s`
      : ended === 'memory'
        ? `leerla necesitaba más de ${num(FONT_READ_MAX_RSS_MB)} MB de memoria`
        : /heap limit|heap out of memory/i.test(stderr)
          ? `sus datos ocupaban más de ${num(FONT_READ_HEAP_MB)} MB de memoria`
          : 'su lectura se detuvo ante un archivo dañado'
  return `La fuente no se ha podido leer dentro de los límites de tiempo y memoria: ${why}. Una fuente de escritura a mano se lee en menos de un segundo; vuelve a exportarla desde tu programa de fuentes o envía otra.`
}

/** A process's resident memory in MB, from /proc; 0 where there is none to read (not Linux, or the process is gone). */
function residentMb(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'latin1')
    const kb = /^VmRSS:\s+(\d+) kB/m.exec(status)
    return kb ? Number(kb[1]) / 1024 : 0
  } catch {
    return 0
  }
}

/** What the structured clone of IPC delivers as a Uint8Array, as a Buffer without copying. */
function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
}
