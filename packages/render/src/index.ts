export { DRAWING_REVISION, MESSAGE_BOX, addressLines, cardLayout, describeLetter, type LetterRecord, renderCard, renderEnvelope, renderProof, type LetterToRender } from './letter.js'
export { handFont, unwritableCharacters } from './fonts.js'
export { MIN_FONT_SIZE } from './handwriting.js'
export { RenderPool, RenderQueueFull, defaultRenderThreads, type RenderKind, type RenderPoolOptions } from './render-pool.js'
