import type { Feature } from '../../common/feature.js'
import admin from './routes/admin.js'
import queues from './routes/queues.js'

/** What ops watch: the queues' dashboard, and the letters that stopped on their way. */
export default { admin, opsPages: queues } satisfies Feature
