import type { Feature } from '../../common/feature.js'
import admin from './routes/admin.js'
import balance from './routes/balance.js'

/** Accounts, their API keys and their credits: created and topped up by ops, the balance read by the client. */
export default { api: balance, admin } satisfies Feature
