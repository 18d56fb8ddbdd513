import type { Feature } from '../common/feature.js'
import accounts from './accounts/feature.js'
import campaigns from './campaigns/feature.js'
import dashboard from './dashboard/feature.js'
import designs from './designs/feature.js'
import floor from './floor/feature.js'
import letters from './letters/feature.js'
import ops from './ops/feature.js'
import personalData from './personal-data/feature.js'
import qr from './qr/feature.js'
import returns from './returns/feature.js'
import senders from './senders/feature.js'
import webhooks from './webhooks/feature.js'

/**
 * Everything the gateway serves, one entry per feature folder. The shell registers each
 * feature's routes in the scope of their callers, in this order (the order of /openapi.json).
 */
export const FEATURES: readonly Feature[] = [designs, senders, campaigns, letters, personalData, webhooks, accounts, returns, dashboard, qr, floor, ops]
