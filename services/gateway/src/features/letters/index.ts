/** What other features use of a letter: finding it, and the floor's and the post's moves of it. */
export { assertCardId, cardNotFound, getAnyCard } from './cards.js'
export { NotMailed, NotReturned, markMailed, markReturned } from './lifecycle.js'
