import { PDFDocument, type PDFPage } from 'pdf-lib'
import { refuse, RefusedError } from './refusal.js'

/** A page's size as it is seen and rendered: the CropBox (within the MediaBox), turned by its /Rotate. */
export interface PageSize {
  /** In PDF points (1/72 inch). */
  widthPt: number
  heightPt: number
  widthMm: number
  heightMm: number
  /** Turned a quarter by /Rotate: poppler's -scale-to-x and -scale-to-y then name the page's unturned sides. */
  quarterTurned: boolean
}

export const ptToMm = (pt: number) => (pt * 25.4) / 72

/**
 * Loads an uploaded PDF and measures its first page; refuses one that pdf-lib cannot read, that
 * is encrypted, or that has no page.
 */
export async function loadUploadedPdf(data: Uint8Array): Promise<PageSize> {
  let doc: PDFDocument
  let first: PDFPage
  try {
    // ignoreEncryption lets pdf-lib open an encrypted file far enough to say that it is one.
    doc = await PDFDocument.load(data, { ignoreEncryption: true, updateMetadata: false })
    if (doc.isEncrypted) refuse('El PDF está cifrado o protegido con contraseña: no se puede imprimir. Envía una versión sin protección ni restricciones.')
    // A file with a header and no catalog loads, and fails here instead.
    if (doc.getPageCount() === 0) refuse('El PDF no tiene ninguna página.')
    first = doc.getPage(0)
  } catch (error) {
    if (error instanceof RefusedError) throw error
    refuse('No se puede leer el PDF: está dañado o no es un PDF válido. Expórtalo de nuevo desde tu programa de diseño.')
  }
  return pageSize(first)
}

function pageSize(page: PDFPage): PageSize {
  let box: { left: number; bottom: number; right: number; top: number }
  try {
    const media = normalize(page.getMediaBox())
    const crop = normalize(page.getCropBox())
    // Viewers and pdftoppm -cropbox show the CropBox clipped to the MediaBox.
    box = {
      left: Math.max(media.left, crop.left),
      bottom: Math.max(media.bottom, crop.bottom),
      right: Math.min(media.right, crop.right),
      top: Math.min(media.top, crop.top),
    }
  } catch {
    refuse('No se puede leer el tamaño de la primera página del PDF: su MediaBox no es válida.')
  }
  let widthPt = box.right - box.left
  let heightPt = box.top - box.bottom
  if (!(widthPt > 0 && heightPt > 0 && Number.isFinite(widthPt) && Number.isFinite(heightPt)))
    refuse('La primera página del PDF no tiene tamaño: su MediaBox o CropBox está vacía.')
  const rotation = ((page.getRotation().angle % 360) + 360) % 360
  const quarterTurned = rotation === 90 || rotation === 270
  if (quarterTurned) [widthPt, heightPt] = [heightPt, widthPt]
  return { widthPt, heightPt, widthMm: ptToMm(widthPt), heightMm: ptToMm(heightPt), quarterTurned }
}

function normalize(rect: { x: number; y: number; width: number; height: number }) {
  const x2 = rect.x + rect.width
  const y2 = rect.y + rect.height
  return { left: Math.min(rect.x, x2), right: Math.max(rect.x, x2), bottom: Math.min(rect.y, y2), top: Math.max(rect.y, y2) }
}
