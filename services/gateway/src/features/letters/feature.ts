import { routesOf, type Feature } from '../../common/feature.js'
import admin from './routes/admin.js'
import bulk from './routes/bulk.js'
import cards from './routes/cards.js'
import create from './routes/create.js'

/** Letters: created one by one or in bulk, read, proofed and cancelled by the client; listed and marked mailed by ops. */
export default { api: routesOf(create, bulk, cards), admin } satisfies Feature
