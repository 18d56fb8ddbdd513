/**
 * What other features use of the designs: fonts that can write a text, designs the account owns,
 * and artwork (a signature's drawing is stored, checked and previewed as a design's artwork is).
 */
export { artworkUploads } from './artwork-uploads.js'
export { listEntries } from './company-data.js'
export { artworkPreview, latestArtwork } from './designs.js'
export { assertWritable, letterHand, type LetterHand } from './fonts.js'
export { assertOwnedDesigns, notOwned } from './ownership.js'
