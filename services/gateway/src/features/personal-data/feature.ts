import type { Feature } from '../../common/feature.js'
import admin from './routes/admin.js'
import api from './routes/public.js'

/** Erasure: a letter's recipient at the client's request, or a whole account's by ops. */
export default { api, admin } satisfies Feature
