export {
  DRAWING_REVISION,
  CODE_MODULE,
  envelopeCode,
  type EnvelopeCode,
  MESSAGE_BOX,
  messageLayout,
  addressLines,
  cardLayout,
  describeLetter,
  type LetterRecord,
  renderCard,
  renderCardSheets,
  renderEnvelope,
  renderEnvelopes,
  renderProof,
  type LetterToRender,
} from './letter.js'
export { handFont, unwritableCharacters } from './fonts.js'
export { MIN_FONT_SIZE } from './handwriting.js'
export { RenderPool, RenderQueueFull, defaultRenderThreads, type RenderKind, type RenderPoolOptions, type RenderTask } from './render-pool.js'
export {
  PEN_LIFT_SECONDS,
  PLOTTER_REVISION,
  codeStrokes,
  orderStrokes,
  plotFigures,
  plotGcode,
  plotLetter,
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
