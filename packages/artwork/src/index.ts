export { inspectArtwork, type InspectInput, type Inspected } from './inspect.js'
export { blankPreview } from './preview.js'
export { pdfPageToPng } from './pdf-page.js'
export { isRefusal, type Refusal } from './refusal.js'
export {
  cardPrintPx,
  cardTrimPx,
  FONT_READERS,
  LOGO_BOX_MM,
  LOGO_MIN_DPI,
  logoBoxPx,
  MAX_PIXELS,
  mmToPx,
  PDF_SIZE_TOLERANCE_MM,
  PREVIEW_MAX_WIDTH,
  PRINT_DPI,
  RASTERIZE_TIMEOUT_MS,
  RATIO_TOLERANCE,
  SIGNATURE_MAX_WIDTH_PX,
  SIGNATURE_MIN_WIDTH_PX,
  type SizePx,
} from './limits.js'
export { fontPreview } from './font-preview.js'
export { FontReaderUnavailableError, inspectFont, type InspectedFont } from './font.js'
