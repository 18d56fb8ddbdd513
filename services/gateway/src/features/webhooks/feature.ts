import { routesOf, type Feature } from '../../common/feature.js'
import events from './routes/events.js'
import endpoints from './routes/webhooks.js'

/** Webhook endpoints, their deliveries, and the events they are sent. */
export default { api: routesOf(endpoints, events) } satisfies Feature
