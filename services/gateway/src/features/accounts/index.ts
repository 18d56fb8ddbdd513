/** What other features use of an account: finding it, writing a row that must belong to one, and its API keys. */
export { accountNotFound, findAccount, intoAccount, notFoundInAccount } from './accounts.js'
export { LISTED_PREFIX_LENGTH, accountApiKeys, issueApiKey } from './api-keys.js'
