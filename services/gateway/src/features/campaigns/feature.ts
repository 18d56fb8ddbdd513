import type { Feature } from '../../common/feature.js'
import admin from './routes/admin.js'
import api from './routes/public.js'

/** Campaigns: a message with variables and default designs, and how its letters fared. */
export default { api, admin } satisfies Feature
