/** A sender as a letter meets it: its name and return address must be writable in the letter's font. */
export { assertSenderWritableIn } from './senders.js'
