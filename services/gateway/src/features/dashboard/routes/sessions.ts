import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { NoBody, SESSION_COOKIE, dashboard, errorResponses } from '@letters/contracts'
import { ApiError, badRequest, notFound } from '../../../common/errors.js'
import { hashPassword, passwordMatches, passwordProblem } from '../passwords.js'
import { clearSessionCookies, identifySession, requireSameOrigin, setSessionCookies } from '../../../common/sessions.js'
import { TOKEN_PATTERN, hashToken } from '../../../common/tokens.js'
import { acceptInvitation, findInvitation, normalizeEmail, signedInUser, userByEmail } from '../users.js'

const tags = ['Dashboard']
/** Signing in needs no key nor session: these routes declare no security scheme. */
const security: [] = []
const wrongCredentials = () => new ApiError(401, 'El correo electrónico o la contraseña no son correctos')
const notSignedIn = () => new ApiError(401, 'No has iniciado sesión en el panel, o la sesión ha caducado')
const invitationGone = () => notFound('La invitación no existe, ya se usó o ha caducado; pide otra a un propietario de la cuenta')

/**
 * Signing in and out of the dashboard, and following an invitation. Outside the scope that
 * requires a caller, inside the API's document and rate limit (per address, as before a key).
 * A change here (signing in, setting a password) must come from our own page: its Origin is
 * checked, as for every change a session makes.
 */
const sessionRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/session',
    {
      schema: {
        summary: 'Signs a person in to the dashboard: sets the session cookie and the CSRF cookie',
        tags,
        security,
        body: dashboard.SignInBody,
        response: { 200: dashboard.Session, ...errorResponses(400, 401, 403, 413, 415, 429, 500, 503) },
      },
    },
    async (request, reply) => {
      requireSameOrigin(app, request)
      const { email, password } = request.body
      // Counted per address and per email: a wrong password and an unknown email are the same failure.
      const verify = async () => {
        const user = await userByEmail(app.db, email)
        return (await passwordMatches(password, user?.passwordHash ?? null)) ? user! : null
      }
      const user = await app.authFailures.check('dashboard-password', request, reply, () =>
        app.authFailures.checkSubject('dashboard-email', normalizeEmail(email), reply, verify),
      )
      if (!user) throw wrongCredentials()
      const { passwordHash: _hash, ...signedIn } = user
      // Undefined when the user was removed, or given another role, while its password was being checked.
      const session = await app.dashboardSessions.open(signedIn)
      if (!session) throw wrongCredentials()
      // This browser's session before, if any, ends: one browser, one session.
      const previous = request.cookies[SESSION_COOKIE]
      if (previous) await app.dashboardSessions.close(previous)
      setSessionCookies(reply, app.config, session)
      return { user: signedIn }
    },
  )

  app.get(
    '/session',
    { schema: { summary: 'The person signed in, or 401', tags, security, response: { 200: dashboard.Session, ...errorResponses(401, 429, 500, 503) } } },
    async (request) => {
      await identifySession(app, request)
      const user = request.caller?.user && (await signedInUser(app.db, request.caller.user.id))
      if (!user) throw notSignedIn()
      return { user }
    },
  )

  app.delete(
    '/session',
    {
      schema: {
        summary: 'Signs out: the session ends and its cookies are cleared',
        tags,
        security,
        body: NoBody,
        response: { 204: Type.Null(), ...errorResponses(400, 403, 413, 415, 429, 500, 503) },
      },
    },
    async (request, reply) => {
      requireSameOrigin(app, request)
      const token = request.cookies[SESSION_COOKIE]
      if (token) await app.dashboardSessions.close(token)
      clearSessionCookies(reply, app.config)
      return reply.status(204).send(null)
    },
  )

  app.post(
    '/invitations/lookup',
    {
      schema: {
        summary: 'Whose invitation a link is: its email, account, role and expiry',
        tags,
        security,
        body: dashboard.InvitationLookupBody,
        response: { 200: dashboard.InvitationView, ...errorResponses(400, 403, 404, 413, 415, 429, 500, 503) },
      },
    },
    async (request) => {
      requireSameOrigin(app, request)
      const invitation = TOKEN_PATTERN.test(request.body.token) ? await findInvitation(app.db, hashToken(request.body.token)) : undefined
      if (!invitation) throw invitationGone()
      return invitation
    },
  )

  app.post(
    '/invitations/accept',
    {
      schema: {
        summary: 'Follows an invitation: sets the password and signs in',
        tags,
        security,
        body: dashboard.AcceptInvitationBody,
        response: { 200: dashboard.Session, ...errorResponses(400, 403, 404, 413, 415, 429, 500, 503) },
      },
    },
    async (request, reply) => {
      requireSameOrigin(app, request)
      const tokenHash = TOKEN_PATTERN.test(request.body.token) ? hashToken(request.body.token) : undefined
      const invitation = tokenHash && (await findInvitation(app.db, tokenHash))
      if (!tokenHash || !invitation) throw invitationGone()
      const problem = passwordProblem(request.body.password, [invitation.email, invitation.accountName])
      if (problem) throw badRequest(problem)
      const passwordHash = await hashPassword(request.body.password)
      // The password and the session in one transaction: a link is never used up without signing its person in.
      const accepted = await app.db.transaction(async (tx) => {
        const user = await acceptInvitation(tx, tokenHash, passwordHash)
        const session = user && (await app.dashboardSessions.open(user, tx))
        return user && session && { user, session }
      })
      if (!accepted) throw invitationGone()
      setSessionCookies(reply, app.config, accepted.session)
      return { user: accepted.user }
    },
  )
}

export default sessionRoutes
