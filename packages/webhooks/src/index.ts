export { assertPublicHost, hostOf, isPublicAddress, RefusedAddressError } from './addresses.js'
export { newWebhookSecret } from './secret.js'
