export {
  DRAWING_REVISION,
  CODE_MODULE,
  INK,
  inkRgb,
  envelopeCode,
  type EnvelopeCode,
  MESSAGE_BOX,
  messageLayout,
  addressLines,
  cardLayout,
  cardOf,
  cardPlaces,
  type CardPlaces,
  envelopeOf,
  describeLetter,
  type LetterRecord,
  renderCard,
  renderCardSheets,
  renderEnvelope,
  renderEnvelopes,
  renderProof,
  PROOF_REVISION,
  renderPrintedParts,
  signaturePlace,
  type LetterToRender,
  type Placement,
  type DesignSignature,
} from './letter.js'
export type { DesignToRender } from './design.js'
export {
  BLEED,
  CARD,
  ENVELOPE,
  MM,
  SHEET_EDGE,
  cardGeometry,
  envelopeGeometry,
  imposition,
  slotAt,
  type CardGeometry,
  type EnvelopeGeometry,
  type Imposition,
  type Size,
} from './geometry.js'
export { fontOf, handFont, unwritableCharacters, type HandChoice, type OwnFont } from './fonts.js'
export { MIN_FONT_SIZE, fitSize, type Measure, type Wrapping } from './handwriting.js'
export { flattenPath, pathSegments, type PathSegment } from './paths.js'
export { RenderPool, RenderQueueFull, defaultRenderThreads, type RenderKind, type RenderPoolOptions, type RenderTask } from './render-pool.js'
export {
  PEN_LIFT_SECONDS,
  PLOTTER_REVISION,
  codeStrokes,
  orderStrokes,
  plotFigures,
  plotGcode,
  plotLetter,
  plotPage,
  plotPages,
  plotSeconds,
  plotSvg,
  plotterFiles,
  renderPlotterProof,
  traceLetter,
  type Plot,
  type PlotFigures,
  type PlotKind,
  type PlotPage,
  type PlotStroke,
  type PlotterSettings,
} from './plotter/plot.js'
export { strokeFont, strokeFontOf } from './plotter/stroke-font.js'
export { code128Bars, code128Layout, type Bar } from './barcode.js'
export { drawingOf } from './describe.js'
export { QR_QUIET_ZONE, cardQr, qrModules, type CardQr, type LetterQr, type Rect } from './qr.js'
