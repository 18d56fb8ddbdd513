import { UnrecoverableError } from 'bullmq'
import { sql } from 'drizzle-orm'
import { printBatchStatus, type Db } from '@letters/db'
import { drawingOf, plotterFiles, renderCard, renderEnvelope, renderPrintedParts, type LetterToRender } from '@letters/render'
import { PrintJournal } from '@letters/artifacts'
import { metrics } from '@letters/observability'
import { batchOf, putInTray } from './batch-tray.js'
import { handedOverFiles, handOver } from './print-handoffs.js'
import type { Floor } from './floor.js'
import {
  batchPrintedDetail,
  JOURNAL_PRINTED_DETAIL,
  letterFileKey,
  onPaperPerJournal,
  letterFolder,
  moveLetter,
  readLetterDrawings,
  recordLetterArtifactsRemoved,
  reopenArtifactsIfErased,
  type StatusInto,
} from '@letters/letters'

/**
 * `rendered`: a test letter, drawn and kept but never handed to the printer, now `printed`.
 * `superseded`: another run took the letter over (a newer claim) or it left `printing`; this run stopped.
 * `batched`: PRINTER=batch, the letter is in a batch, which prints it when it is handed over.
 */
export type ProductionOutcome = 'printed' | 'rendered' | 'already_done' | 'superseded' | 'batched'

/** The event of a test letter leaving production, shown to the client. */
export const TEST_RENDERED_DETAIL = 'Carta de prueba: tarjeta y sobre generados; no se ha impreso'

/** The claim's event, by the status a production job (re)starts from: a fresh letter, an interrupted run, an ops retry. */
const claimDetail: Record<StatusInto<'printing'>, string> = {
  ready_for_print: 'En producción',
  printing: 'En producción de nuevo: el intento anterior no terminó',
  failed: 'En producción de nuevo: reintento pedido por operaciones',
}

/** Moves the letter to `printing` under the next print claim; undefined when it is past production or cancelled. */
async function claim(db: Db, letterId: string): Promise<{ printClaim: number; livemode: boolean } | undefined> {
  const { moved, letter, printClaim } = await db.transaction((tx) =>
    moveLetter(tx, letterId, { to: 'printing', printClaim: 'next', detail: (from) => claimDetail[from.status as StatusInto<'printing'>] }),
  )
  if (!letter) throw new UnrecoverableError(`letter ${letterId} does not exist`)
  if (!moved || printClaim === undefined) return undefined
  return { printClaim, livemode: letter.livemode }
}

/** What the renderer needs, reloaded from the rows: the job carries the id only. */
async function letterToRender(db: Db, letterId: string, floor: Pick<Floor, 'floorCountry' | 'publicBaseUrl'>): Promise<LetterToRender> {
  const [source] = await readLetterDrawings(db, [letterId])
  if (!source) throw new UnrecoverableError(`letter ${letterId} does not exist`)
  if (!source.address) throw new UnrecoverableError(`letter ${letterId} has no verified address`)
  try {
    return drawingOf(source, floor.floorCountry, floor.publicBaseUrl)
  } catch (error) {
    // A font later removed from the catalogue, or a QR code with no base URL to link it to: no retry can draw it.
    throw new UnrecoverableError(String(error))
  }
}

/**
 * A transition out of `printing`, with its event; false when the letter was no longer printing
 * or, with a claim, no longer under that claim. `'any'`: whoever holds it (a job that failed
 * before it could take a claim of its own, or that BullMQ failed without running it).
 */
async function leavePrinting(db: Db, letterId: string, claim: number | 'any', status: 'printed' | 'failed', detail: string): Promise<boolean> {
  const { moved } = await db.transaction((tx) =>
    moveLetter(tx, letterId, { from: 'printing', to: status, detail, ...(claim === 'any' ? {} : { printClaim: claim }) }),
  )
  return moved
}

/** One print file of a letter: its name after the letter's id (`card.pdf`), and what draws it. */
interface PrintFileSpec {
  file: string
  kind: 'card' | 'envelope'
  render(letter: LetterToRender): Promise<Buffer>
}

/**
 * The print files of a letter, in the order the floor needs them: card first, then envelope. A
 * plotter takes each as SVG (to look at, or for plotting software) and G-code (for the machine);
 * the four are drawn together, once, when the first is asked for. What a pen cannot draw (a
 * printed card's front artwork, an envelope's logo) goes before them as PDFs for a printer to
 * put on the stock first (`card-front.pdf`, `envelope-logo.pdf`).
 */
function printFilesOf(output: NonNullable<Floor['output']>, letter: LetterToRender): PrintFileSpec[] {
  if (output.kind === 'pdf') {
    return [
      { file: 'card.pdf', kind: 'card', render: renderCard },
      { file: 'envelope.pdf', kind: 'envelope', render: renderEnvelope },
    ]
  }
  let drawn: ReturnType<typeof plotterFiles> | undefined
  const plotted = (file: keyof ReturnType<typeof plotterFiles>) => (letter: LetterToRender) =>
    Promise.resolve((drawn ??= plotterFiles(letter, output.settings))[file])
  const printed = renderPrintedParts(letter)
  const parts: PrintFileSpec[] = []
  if (printed.front) parts.push({ file: 'card-front.pdf', kind: 'card', render: printed.front })
  if (printed.logo) parts.push({ file: 'envelope-logo.pdf', kind: 'envelope', render: printed.logo })
  return [
    ...parts,
    ...(['card.svg', 'card.gcode', 'envelope.svg', 'envelope.gcode'] as const).map((file) => ({
      file,
      kind: file.startsWith('card') ? ('card' as const) : ('envelope' as const),
      render: plotted(file),
    })),
  ]
}

async function rendered(kind: PrintFileSpec['kind'], render: () => Promise<Buffer>): Promise<Buffer> {
  const stop = metrics.renderSeconds.startTimer({ kind })
  try {
    return await render()
  } finally {
    stop()
  }
}

/**
 * The floor's job for one letter: claim it (`printing`, the next print claim), render card and
 * envelope, keep the files in the artifact store, hand each to the printer with its record
 * (`handOver`), mark the letter `printed`. A test letter (livemode false) goes the same way
 * except that nothing reaches the printer: no handoff, no spool file, no print command; it is
 * marked `printed` once its files are kept (the letter clock marks it `mailed` later). A letter
 * already printed, mailed or cancelled is left as it is, so running the job twice changes
 * nothing. A run whose claim was superseded stops before its next file and marks nothing. A
 * file recorded as handed over, by any run, is not sent again; one the printer accepted just
 * before this process died unrecorded is (README, Operations). `onClaimed` learns the claim
 * once it is taken, for the bookkeeping of a failure.
 */
export async function produceLetter(floor: Floor, letterId: string, onClaimed?: (claim: number) => void): Promise<ProductionOutcome> {
  if (floor.batching) {
    const settled = await settledByBatch(floor, letterId)
    if (settled) return settled
  }
  const held = await claim(floor.db, letterId)
  if (held === undefined) return 'already_done'
  onClaimed?.(held.printClaim)
  const toPrinter = held.livemode
  // In batch mode the letter's own files are kept, never handed over: its batch's are.
  const { handed, fromJournal } = toPrinter && !floor.batching ? await handedOverFiles(floor, letterId) : { handed: new Set<string>(), fromJournal: 0 }
  const output = floor.output ?? { kind: 'pdf' }
  const letter = await letterToRender(floor.db, letterId, floor)
  const specs = printFilesOf(output, letter)
  const names = specs.map(({ file }) => `${letterId}.${file}`)
  const missing = specs.filter(({ file }) => !handed.has(`${letterId}.${file}`))
  if (missing.length > 0) {
    const files = await Promise.all(
      missing.map(async ({ file, kind, render }) => {
        const data = await rendered(kind, () => render(letter))
        return { name: `${letterId}.${file}`, data, location: await floor.store.put(letterFileKey(letterId, file), data) }
      }),
    )
    // A run superseded while it drew (another printed the letter, which was then erased) must not
    // leave its files behind: the erasure removed the files there when it committed, not these.
    if (await reopenArtifactsIfErased(floor.db, letterId)) {
      await floor.store.removeFolder(letterFolder(letterId))
      await recordLetterArtifactsRemoved(floor.db, [letterId])
      return 'superseded'
    }
    if (toPrinter && floor.batching) return intoTray(floor, floor.batching, letterId, held.printClaim)
    for (const file of toPrinter ? files : []) {
      if ((await handOver(floor, letterId, held.printClaim, file, names)) === 'superseded') return 'superseded'
    }
  }
  const detail = !toPrinter
    ? TEST_RENDERED_DETAIL
    : missing.length === 0 && fromJournal > 0
      ? JOURNAL_PRINTED_DETAIL
      : `Entregada ${output.kind === 'plotter' ? 'al plóter' : 'a la impresora'} (${floor.printer.name}): tarjeta y sobre`
  const printed = await leavePrinting(floor.db, letterId, held.printClaim, 'printed', detail)
  if (!printed) return 'superseded'
  return toPrinter ? 'printed' : 'rendered'
}

/**
 * PRINTER=batch, before any claim: a letter already in a batch is its batch's to print. One in a
 * batch not handed over yet is left alone (a job run again by the reconciler while it waits in
 * the tray changes nothing); one whose batch was handed over but which is not `printed` (it was
 * marked failed while it waited) is printed, with its batch's event. Undefined: not in a batch.
 */
async function settledByBatch(floor: Floor, letterId: string): Promise<ProductionOutcome | undefined> {
  const { db } = floor
  const batch = await batchOf(db, letterId)
  if (!batch) return settledByJournaledBatch(floor, letterId)
  if (batch.status !== printBatchStatus.handed) return 'batched'
  const detail = batchPrintedDetail(batch.batchId, batch.sequence ?? 0, batch.letterCount)
  const { moved } = await db.transaction((tx) => moveLetter(tx, letterId, { to: 'printed', detail }))
  return moved ? 'printed' : 'already_done'
}

/**
 * PRINTER=batch, a letter in no batch the database knows: one the print journal has in a batch
 * handed over whole was printed before the database was restored from a backup that predates its
 * batch. It is marked printed instead of going into a new batch.
 */
async function settledByJournaledBatch(floor: Floor, letterId: string): Promise<ProductionOutcome | undefined> {
  const onPaper = await onPaperPerJournal(new PrintJournal(floor.store), letterId)
  if (!onPaper) return undefined
  const { moved, letter } = await floor.db.transaction((tx) => moveLetter(tx, letterId, { to: 'printed', detail: onPaper.detail }))
  if (moved && letter) metrics.lettersSettledFromJournal.inc({ status: letter.status })
  return moved ? 'printed' : 'already_done'
}

/** PRINTER=batch: the letter, rendered and kept, goes into the open batch; its closer hands it over. */
async function intoTray(floor: Floor, batching: NonNullable<Floor['batching']>, letterId: string, printClaim: number): Promise<ProductionOutcome> {
  const tray = await putInTray(floor.db, letterId, printClaim, batching.rules)
  if (tray.outcome === 'superseded') return 'superseded'
  if (tray.outcome === 'added' && tray.closed) batching.poke()
  return 'batched'
}

// Event details are shown to the client (GET /cards/{id}): they say what happened, never the
// technical reason, which stays in the job's failedReason and the logs for ops.

/** After the last attempt: the letter goes to `failed`, for ops to see and retry, unless another run has claimed it since. */
export function markFailed(db: Db, letterId: string, attempts: number, claim: number | 'any'): Promise<boolean> {
  const detail =
    attempts > 1 ? `La producción falló tras ${attempts} intentos; operaciones revisará la carta` : 'La producción falló; operaciones revisará la carta'
  return leavePrinting(db, letterId, claim, 'failed', detail)
}

/** A failed attempt that will be retried, in the letter's history. */
export async function recordFailedAttempt(db: Db, letterId: string, claim: number, attempt: number, attempts: number): Promise<void> {
  // Only while the attempt's claim is the letter's: a run superseded since leaves no trace. Raw SQL
  // kept: INSERT … SELECT makes the check and the insert one statement, with no row to read back.
  await db.execute(sql`
    INSERT INTO letter_events (letter_id, status, detail)
    SELECT id, 'printing', ${`Intento ${attempt} de ${attempts} fallido; se reintentará`} FROM letters
    WHERE id = ${letterId}::uuid AND status = 'printing' AND print_claim = ${claim}`)
}
