import { routesOf, type Feature } from '../../common/feature.js'
import fonts from './routes/admin-fonts.js'
import designs from './routes/admin.js'
import api from './routes/public.js'

/** Card and envelope designs with their artwork, and the handwriting fonts: the built-in ones and an account's own. */
export default { api, admin: routesOf(designs, fonts) } satisfies Feature
