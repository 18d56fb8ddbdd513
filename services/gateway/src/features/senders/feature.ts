import type { Feature } from '../../common/feature.js'
import admin from './routes/admin.js'
import api from './routes/public.js'

/** Senders: the name that signs a letter and the return address on its envelope. */
export default { name: 'senders', api, admin } satisfies Feature
