import type { Feature } from '../../common/feature.js'
import admin from './routes/admin.js'
import api from './routes/public.js'

/** Senders and signatures: the name that signs a letter, the return address on its envelope, the drawn signature. */
export default { api, admin } satisfies Feature
