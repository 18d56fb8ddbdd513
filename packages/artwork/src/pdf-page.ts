import { PDFDocument } from 'pdf-lib'
import { PREVIEW_MAX_WIDTH } from './limits.js'
import { runPoppler } from './poppler.js'

/**
 * A PNG thumbnail, `maxWidth` px wide, of page `page` (1-based) of one of our own PDFs (a proof).
 * Undefined when the PDF has no such page. A PDF that cannot be read or drawn throws: ours are
 * made by the renderer, so that is a fault, not a client's mistake.
 */
export async function pdfPageToPng(pdf: Uint8Array, page: number, maxWidth = PREVIEW_MAX_WIDTH): Promise<Buffer | undefined> {
  if (!Number.isInteger(maxWidth) || maxWidth < 1) throw new RangeError(`pdfPageToPng: maxWidth must be a positive integer, got ${maxWidth}`)
  if (!Number.isInteger(page) || page < 1) return undefined
  const doc = await PDFDocument.load(pdf, { ignoreEncryption: true, updateMetadata: false })
  if (page > doc.getPageCount()) return undefined
  const result = await runPoppler(
    'pdftoppm',
    ['-png', '-f', String(page), '-l', String(page), '-cropbox', '-singlefile', '-scale-to-x', String(maxWidth), '-scale-to-y', '-1', '-'],
    pdf,
  )
  if (!result.ok) throw new Error(`pdfPageToPng: page ${page}: ${result.detail}`)
  return result.stdout
}
