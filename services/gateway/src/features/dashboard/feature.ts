import type { Feature } from '../../common/feature.js'
import admin from './routes/admin.js'
import sessions from './routes/sessions.js'
import files from './routes/static.js'
import team from './routes/team.js'

/** The dashboard's people: invitations, signing in and out, the team and its keys, and the web app's files. */
export default { api: team, anonymous: sessions, admin, files } satisfies Feature
