/** The suppression list, as a new letter meets it: an address that came back is refused before anything is charged. */
export { refuseSuppressed, sentToOf, suppressAddress, suppressedAddress, withSuppressionKey } from './suppressions.js'
