import type { Feature } from '../../common/feature.js'
import redirect from './routes/redirect.js'

/** The short link a letter's QR code encodes: counts the scan and redirects. */
export default { anonymous: redirect } satisfies Feature
