import type { FastifyBaseLogger } from 'fastify'
import { and, eq, isNotNull, isNull } from 'drizzle-orm'
import type { ArtifactStore } from '@letters/artifacts'
import { letterFileKey, letterFolder } from '@letters/letters'
import { UUID_PATTERN } from '@letters/contracts'
import { pdfPageToPng } from '@letters/artwork'
import { letters, type Db } from '@letters/db'
import { DRAWING_REVISION, PLOTTER_REVISION, PROOF_REVISION, RenderQueueFull, drawingOf, type LetterToRender, type RenderPool } from '@letters/render'
import { ApiError, notFound } from '../../common/errors.js'
import { Unavailable } from '../../common/errors.js'
import { assertCardId, cardNotFound } from './cards.js'
import type { Config } from '@letters/config'
import type { KeyScope } from '../../common/caller.js'
import { readLetterDrawings, recordLetterArtifactsRemoved, reopenArtifactsIfErased } from '@letters/letters'

export interface ProofSources {
  db: Db
  artifacts: ArtifactStore
  renderPool: RenderPool
  config: Pick<Config, 'http' | 'printer' | 'floorCountry' | 'plotter' | 'publicBaseUrl'>
}

/**
 * How long a client waits for a proof being drawn before it is told to come back: half the
 * request timeout, so the answer always goes out before the server would close an idle socket.
 * The render goes on, and a final proof is kept, so the client's next request is served at once.
 */
const proofDeadline = (sources: ProofSources) => sources.config.http.requestTimeoutMs / 2

/** What a letter is printed with: PDFs for a printer (spool or batch) or strokes for a pen plotter. */
export type PrintOutput = 'pdf' | 'plotter'

/**
 * Where a letter's final proof is kept, beside the floor's print files; a plotter letter's proof
 * is a drawing of its own. The name carries what the proof was drawn with, so that a proof kept
 * before a change is drawn again rather than served.
 */
export const proofKey = (letterId: string, output: PrintOutput = 'pdf') =>
  letterFileKey(
    letterId,
    output === 'plotter' ? `proof-plotter-r${DRAWING_REVISION}.${PLOTTER_REVISION}.pdf` : `proof-r${DRAWING_REVISION}.${PROOF_REVISION}.pdf`,
  )

/**
 * What a letter is (or will be) printed with, for its proof to show the same: once the floor has
 * produced it, what its print files in the artifact store are (the worker's PRINTER decided, as it
 * produced the letter); before that, what the floor prints with now (PRINTER, one setting for the
 * gateway and the workers).
 */
export async function printOutputOf(sources: Pick<ProofSources, 'artifacts' | 'config'>, letterId: string): Promise<PrintOutput> {
  if (await sources.artifacts.get(`${letterId}/card.gcode`)) return 'plotter'
  if (await sources.artifacts.get(`${letterId}/card.pdf`)) return 'pdf'
  return floorOutput(sources.config)
}

/** What the floor prints a letter with now (PRINTER, one setting for the gateway and the workers). */
export const floorOutput = (config: Pick<Config, 'printer'>): PrintOutput => (config.printer === 'plotter' ? 'plotter' : 'pdf')

/** The proof of a letter whose personal data was erased: there is nothing left to draw it with. */
export const proofGone = () => new ApiError(410, 'Los datos personales de esta carta se borraron, y su prueba con ellos: ya no se puede ver')

/** Whether the key's letter exists with its personal data erased (a proof of it is then gone, not unknown). */
async function erasedCard(db: Db, scope: KeyScope, cardId: string): Promise<boolean> {
  const [erased] = await db
    .select({ id: letters.id })
    .from(letters)
    .where(and(eq(letters.id, cardId), eq(letters.accountId, scope.accountId), eq(letters.livemode, scope.livemode), isNotNull(letters.personalDataErasedAt)))
  return erased !== undefined
}

/**
 * The proof of one of the account's letters: card and envelope drawn exactly as the floor prints
 * them (a plotter letter: its strokes, as PDF paths). Before its address is verified, the envelope shows the address as it was sent. Once the
 * address is verified (or rejected) nothing it shows can change any more (message, font, sender
 * name and address are never edited), so the first proof drawn then is kept in the artifact
 * store and served from there afterwards. Once its personal data is erased, the proof is gone: 410.
 */
export async function cardProof(sources: ProofSources, log: FastifyBaseLogger, scope: KeyScope, cardId: string): Promise<Buffer> {
  assertCardId(cardId)
  return (await proofOf(sources, log, scope, cardId, printOutputOf(sources, cardId))).pdf
}

/**
 * A letter's proof, whether it is final (kept once drawn), and what it was drawn for (`output`,
 * looked up by the caller, once, while it looks for what it keeps of its own). `cardId` is checked.
 */
async function proofOf(
  sources: ProofSources,
  log: FastifyBaseLogger,
  scope: KeyScope,
  cardId: string,
  output: Promise<PrintOutput>,
): Promise<{ pdf: Buffer; final: boolean; kind: PrintOutput }> {
  // The kept proof is looked for while the letter is read, not after: one wait fewer. It is
  // served only once the row shows the letter is the account's and final.
  const keptProof = output.then((kind) => sources.artifacts.get(proofKey(cardId, kind)))
  keptProof.catch(() => {})
  const [source] = await readLetterDrawings(
    sources.db,
    [cardId],
    and(eq(letters.accountId, scope.accountId), eq(letters.livemode, scope.livemode), isNull(letters.personalDataErasedAt)),
  )
  if (!source) throw (await erasedCard(sources.db, scope, cardId)) ? proofGone() : cardNotFound()

  const final = source.address !== null
  const kind = await output
  if (final) {
    const kept = await keptProof
    if (kept) return { pdf: kept, final, kind }
  }
  // Checked when the letter was created; a font later removed from the catalogue is a bug of ours (drawingOf throws).
  const drawing = drawProof(
    sources.renderPool,
    kind,
    sources.config.plotter.penWidth,
    drawingOf(source, sources.config.floorCountry, sources.config.publicBaseUrl),
  ).then(async (pdf) => {
    // Losing the copy costs one more render next time: the client still gets its proof.
    if (final) await keep(sources, log, cardId, proofKey(cardId, kind), pdf)
    return pdf
  })
  return { pdf: await within(drawing, proofDeadline(sources)), final, kind }
}

/** Keeps a final proof's file beside the letter's print files; a failure only costs drawing it again. */
async function keep(sources: Pick<ProofSources, 'db' | 'artifacts'>, log: FastifyBaseLogger, cardId: string, key: string, data: Buffer): Promise<void> {
  await sources.artifacts
    .put(key, data)
    .then(() => removeIfErased(sources, cardId))
    .catch((err: unknown) => log.warn({ err, cardId }, 'could not keep the proof in the artifact store'))
}

/**
 * A proof drawn from the letter as it was read, and kept once its erasure had removed the
 * letter's files, would bring its name and address back: looked for after the proof is kept, so
 * an erasure committed later finds the proof there and removes it itself.
 */
async function removeIfErased(sources: Pick<ProofSources, 'db' | 'artifacts'>, cardId: string): Promise<void> {
  if (!(await reopenArtifactsIfErased(sources.db, cardId))) return
  await sources.artifacts.removeFolder(letterFolder(cardId))
  await recordLetterArtifactsRemoved(sources.db, [cardId])
}

/** The proof if it is ready in time; else 503, while the drawing goes on (and is kept, if final). */
async function within(drawing: Promise<Buffer>, ms: number): Promise<Buffer> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Unavailable('La prueba está tardando más de lo normal; vuelve a pedirla en unos segundos')), ms)
  })
  drawing.catch(() => {})
  try {
    return await Promise.race([drawing, late])
  } finally {
    clearTimeout(timer)
  }
}

/**
 * What of a letter a proof draws: every page, or the card's handwritten side first (a preview,
 * which shows nothing else).
 */
export type ProofPages = 'all' | 'handwriting'

/**
 * A plotter proof's strokes depend on the pen's width (the bars' hatching): the gateway reads
 * PLOTTER_PEN_WIDTH_MM as the workers do. `handwriting`: for a printer, the card's own print file
 * with its front artwork left out, which is then the writing alone at the card's trim, drawn as
 * the proof's writing page is (one page, and no front or envelope drawn for nothing); a plotter
 * proof has no front page, its card comes first.
 */
export async function drawProof(pool: RenderPool, output: PrintOutput, penWidth: number, letter: LetterToRender, pages: ProofPages = 'all'): Promise<Buffer> {
  try {
    if (output === 'plotter') return await pool.render('plotter-proof', letter, penWidth)
    return await (pages === 'all' ? pool.render('proof', letter) : pool.render('card', withoutFront(letter)))
  } catch (error) {
    // Every render thread is busy and the queue is full: come back in a few seconds.
    if (error instanceof RenderQueueFull) throw new Unavailable('Hay demasiadas pruebas en preparación; inténtalo de nuevo en unos segundos')
    throw error
  }
}

/** The letter with its card's front artwork left out: a card without one is printed as its writing alone (renderCard). */
function withoutFront(letter: LetterToRender): LetterToRender {
  const { design } = letter
  return design ? { ...letter, design: { ...design, card: { ...design.card, front: null } } } : letter
}

/**
 * One page of a letter's proof as a PNG at most 1,000 px wide (a thumbnail a client shows its
 * users): 404 for a page the proof does not have.
 */
export async function cardProofPage(sources: ProofSources, log: FastifyBaseLogger, scope: KeyScope, cardId: string, page: number): Promise<Buffer> {
  assertCardId(cardId)
  // As for the proof: the kept page is looked for while the letter is read, and served only once it shows the letter is the account's and final.
  const output = printOutputOf(sources, cardId)
  const keptPage = output.then((kind) => sources.artifacts.get(proofPageKey(cardId, kind, page)))
  keptPage.catch(() => {})
  const { pdf, final, kind } = await proofOf(sources, log, scope, cardId, output)
  if (final) {
    const kept = await keptPage
    if (kept) return kept
  }
  const png = await pdfPageToPng(pdf, page, 1000)
  if (!png) throw notFound(`La prueba no tiene página ${page}`)
  if (final) await keep(sources, log, cardId, proofPageKey(cardId, kind, page), png)
  return png
}

const fileName = (key: string) => key.slice(key.lastIndexOf('/') + 1)

/** Where a final proof's page is kept as a PNG, beside the proof. */
export const proofPageKey = (letterId: string, output: PrintOutput, page: number) => proofKey(letterId, output).replace(/\.pdf$/, `-p${page}.png`)

/**
 * Whether a page asked for is kept already: serving it draws nothing, so it is not counted
 * against the proofs' rate limit (the dashboard shows three pages of each letter it opens). The
 * route still checks that the letter is the caller's before it serves the page.
 */
export async function proofPageKept(artifacts: ArtifactStore, cardId: string, page: number): Promise<boolean> {
  if (!UUID_PATTERN.test(cardId) || !Number.isInteger(page) || page < 1 || page > 10) return false
  const kept = new Set(await artifacts.list(letterFolder(cardId)).catch(() => []))
  return (['pdf', 'plotter'] as const).some((output) => kept.has(fileName(proofPageKey(cardId, output, page))))
}
