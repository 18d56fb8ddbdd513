/** What a letter is drawn with, as other features check it: fonts that can write a text, designs the account owns. */
export { listEntries } from './company-data.js'
export { assertWritable, letterHand, type LetterHand } from './fonts.js'
export { assertOwnedDesigns, notOwned } from './ownership.js'
