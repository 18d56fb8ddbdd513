import { runPoppler } from './poppler.js'
import { refuse } from './refusal.js'

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
 * Measures an uploaded PDF's first page with poppler's pdfinfo, in a process of its own with a
 * time and memory limit, never in the gateway: a PDF can be built to take minutes or gigabytes to
 * read (streams that expand a thousandfold). Refuses one that poppler cannot read, that is
 * encrypted, or that has no page.
 */
export async function loadUploadedPdf(data: Uint8Array): Promise<PageSize> {
  const info = await runPoppler('pdfinfo', ['-box', '-f', '1', '-l', '1', '-'], data, PDF_INFO_TIMEOUT_MS)
  if (!info.ok) {
    if (/incorrect password/i.test(info.detail)) refuse(ENCRYPTED)
    if (info.reason === 'timeout') refuse(`El PDF tarda demasiado en leerse (más de ${PDF_INFO_TIMEOUT_MS / 1000} s): simplifícalo o envíalo como PNG.`)
    refuse('No se puede leer el PDF: está dañado o no es un PDF válido. Expórtalo de nuevo desde tu programa de diseño.')
  }
  const text = info.stdout.toString('latin1')
  const field = (name: RegExp) => name.exec(text)?.[1]
  if (/^Encrypted:\s+yes/m.test(text)) refuse(ENCRYPTED)
  if (Number(field(/^Pages:\s+(\d+)/m) ?? 0) === 0) refuse('El PDF no tiene ninguna página.')
  const box = (name: string) =>
    field(new RegExp(`^Page\\s+1 ${name}:\\s+(.+)$`, 'm'))
      ?.trim()
      .split(/\s+/)
      .map(Number)
  const media = box('MediaBox')
  const crop = box('CropBox') ?? media
  if (!media || !crop || media.length !== 4 || crop.length !== 4 || [...media, ...crop].some((n) => !Number.isFinite(n)))
    refuse('No se puede leer el tamaño de la primera página del PDF: su MediaBox no es válida.')
  const rotation = ((Number(field(/^Page\s+1 rot:\s+(-?\d+)/m) ?? 0) % 360) + 360) % 360
  return pageSize(media as Box, crop as Box, rotation)
}

const ENCRYPTED = 'El PDF está cifrado o protegido con contraseña: no se puede imprimir. Envía una versión sin protección ni restricciones.'
const PDF_INFO_TIMEOUT_MS = 10_000
type Box = [number, number, number, number]

function pageSize(mediaBox: Box, cropBox: Box, rotation: number): PageSize {
  const media = normalize(mediaBox)
  const crop = normalize(cropBox)
  // Viewers and pdftoppm -cropbox show the CropBox clipped to the MediaBox.
  const box = {
    left: Math.max(media.left, crop.left),
    bottom: Math.max(media.bottom, crop.bottom),
    right: Math.min(media.right, crop.right),
    top: Math.min(media.top, crop.top),
  }
  let widthPt = box.right - box.left
  let heightPt = box.top - box.bottom
  if (!(widthPt > 0 && heightPt > 0 && Number.isFinite(widthPt) && Number.isFinite(heightPt)))
    refuse('La primera página del PDF no tiene tamaño: su MediaBox o CropBox está vacía.')
  const quarterTurned = rotation === 90 || rotation === 270
  if (quarterTurned) [widthPt, heightPt] = [heightPt, widthPt]
  return { widthPt, heightPt, widthMm: ptToMm(widthPt), heightMm: ptToMm(heightPt), quarterTurned }
}

/** A box as pdfinfo writes it (two corners, in either order) as its edges. */
function normalize([x1, y1, x2, y2]: Box) {
  return { left: Math.min(x1, x2), right: Math.max(x1, x2), bottom: Math.min(y1, y2), top: Math.max(y1, y2) }
}
