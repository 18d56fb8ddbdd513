/** What other features use of an account: finding it, and writing a row that must belong to one. */
export { accountNotFound, findAccount, intoAccount, notFoundInAccount } from './accounts.js'
