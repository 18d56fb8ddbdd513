import type { Feature } from '../../common/feature.js'
import admin from './routes/admin.js'
import suppressions from './routes/suppressions.js'

/** Returned letters and the addresses an account no longer writes to. */
export default { api: suppressions, admin } satisfies Feature
