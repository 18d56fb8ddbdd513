import { createHash } from 'node:crypto'
import { QR_CODE_ALPHABET, QR_CODE_LENGTH, type publicApi } from '@letters/contracts'
import type { Config } from '@letters/config'
import type { Db } from '@letters/db'
import { pdfPageToPng, PREVIEW_MAX_WIDTH } from '@letters/artwork'
import { unstoredLetterDrawing } from '@letters/letters'
import { drawingOf, type RenderPool } from '@letters/render'
import type { KeyScope } from '../../common/caller.js'
import { assertOwnedDesigns } from '../designs/index.js'
import { drawProof, floorOutput } from './proofs.js'
import { checkedSingleLetter } from './create-letter.js'

export interface PreviewSources {
  db: Db
  renderPool: RenderPool
  config: Pick<Config, 'letterCosts' | 'printer' | 'floorCountry' | 'plotter' | 'publicBaseUrl'>
}

/**
 * The id a preview is drawn under, which seeds its hand (the same id, the same strokes): the
 * account's own and never the body's, so that while a person types, what is written already keeps
 * its strokes (the hand draws each line and glyph from one sequence, in order) instead of every
 * key changing them all, and the same body always gives the same image. The letter created
 * afterwards gets an id of its own, so its strokes vary as much as any two letters' do.
 */
export function previewId(accountId: string): string {
  const hex = createHash('sha256').update(`single-preview:${accountId}`).digest('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`
}

/**
 * The code a preview's QR code links with, for a body with a trackingUrl: one per account, as
 * long as a letter's, so that the same body gives the same image (the draft's own code is drawn
 * at random, and a letter's only once it is created). It links to no letter.
 */
function previewTrackingCode(accountId: string): string {
  const bytes = createHash('sha256').update(`single-preview-qr:${accountId}`).digest()
  return Array.from(bytes.subarray(0, QR_CODE_LENGTH), (byte) => QR_CODE_ALPHABET[byte % QR_CODE_ALPHABET.length]).join('')
}

/**
 * The handwritten side of the card of the letter POST /single would create from `body`, as the
 * floor prints it, as a PNG at most PREVIEW_MAX_WIDTH wide: refused with the 400 POST /single
 * answers (the same checks, then the intake's ownership check), then drawn from what the letter's
 * row would hold (unstoredLetterDrawing) by the render pool. Nothing is charged or stored and the
 * balance is not looked at: an account may preview a letter it cannot pay for yet. `sendAt` is
 * checked and plays no part in the drawing.
 */
export async function singleLetterPreview(sources: PreviewSources, requester: KeyScope, body: publicApi.SingleLetterBody): Promise<Buffer> {
  const { db, config } = sources
  const draft = await checkedSingleLetter({ db, letterCosts: config.letterCosts }, requester.accountId, body)
  // The intake's own check, with the same messages: the print spec below would draw another account's designs.
  await assertOwnedDesigns(db, requester.accountId, draft)
  const source = await unstoredLetterDrawing(db, {
    ...draft,
    id: previewId(requester.accountId),
    trackingCode: draft.trackingCode === null ? null : previewTrackingCode(requester.accountId),
  })
  const pdf = await drawProof(
    sources.renderPool,
    floorOutput(config),
    config.plotter.penWidth,
    drawingOf(source, config.floorCountry, config.publicBaseUrl),
    'handwriting',
  )
  const png = await pdfPageToPng(pdf, 1, PREVIEW_MAX_WIDTH)
  if (!png) throw new Error("a preview's drawing has no first page")
  return png
}
