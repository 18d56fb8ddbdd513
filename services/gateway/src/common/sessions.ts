import { timingSafeEqual } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { eq, lt, sql } from 'drizzle-orm'
import type { Config } from '@letters/config'
import { CSRF_COOKIE, SESSION_COOKIE, type DashboardRole } from '@letters/contracts'
import { dashboardSessions, dashboardUsers, type Db, type Executor } from '@letters/db'
import type { Caller } from './caller.js'
import { ApiError } from './errors.js'
import { hashToken, newToken, TOKEN_PATTERN } from './tokens.js'

/** A session's last use is written at most this often: one write a minute, not one a request. */
const TOUCH_EVERY_MS = 60_000
/** However much it is used, a session ends this long after it was opened: a stolen cookie does not last for ever. */
export const SESSION_MAX_AGE_MS = 30 * 86_400_000

interface OpenSession {
  caller: Caller
  csrfToken: string
}

/**
 * Dashboard sessions in Postgres: a random token in an HttpOnly cookie, its hash in
 * `dashboard_sessions`. A session has ended once it has gone unused for `idleMs`, 30 days after it
 * was opened, once its user has another role than it was opened with, or once its user is removed
 * (the row goes with it).
 */
export class DashboardSessions {
  constructor(
    private readonly db: Db,
    private readonly idleMs: number,
  ) {}

  /**
   * Opens a session for `user` with the role it has now; undefined when it no longer exists or
   * no longer has that role (removed or changed while it was signing in). Sessions that have
   * ended unused, anyone's, are cleared on the way (the index on their last use finds them), so
   * that the sessions of people who never come back do not pile up.
   */
  async open(user: { id: string; role: DashboardRole }, ex: Executor = this.db): Promise<{ token: string; csrfToken: string } | undefined> {
    const { token, hash } = newToken()
    // Kept as it is, not hashed: it opens nothing without the session's own cookie.
    const csrfToken = newToken().token
    await ex.delete(dashboardSessions).where(lt(dashboardSessions.lastSeenAt, new Date(Date.now() - this.idleMs)))
    // The user's row is locked as it is read: a removal committing meanwhile is waited for and then
    // seen, so no session is opened for a user who is gone. (A new role is caught by identify.)
    const opened = await ex.execute(sql`
      INSERT INTO ${dashboardSessions} (token_hash, user_id, role, csrf_token)
      SELECT ${hash}, ${dashboardUsers.id}, ${dashboardUsers.role}, ${csrfToken} FROM ${dashboardUsers}
      WHERE ${dashboardUsers.id} = ${user.id} AND ${dashboardUsers.role} = ${user.role}
      FOR KEY SHARE`)
    return opened.count === 1 ? { token, csrfToken } : undefined
  }

  /** The caller behind a session cookie, or null when the session is unknown or has ended. */
  async identify(token: string): Promise<OpenSession | null> {
    if (!TOKEN_PATTERN.test(token)) return null
    const tokenHash = hashToken(token)
    const [row] = await this.db
      .select({
        userId: dashboardSessions.userId,
        openedAs: dashboardSessions.role,
        csrfToken: dashboardSessions.csrfToken,
        lastSeenAt: dashboardSessions.lastSeenAt,
        createdAt: dashboardSessions.createdAt,
        role: dashboardUsers.role,
        accountId: dashboardUsers.accountId,
      })
      .from(dashboardSessions)
      .innerJoin(dashboardUsers, eq(dashboardUsers.id, dashboardSessions.userId))
      .where(eq(dashboardSessions.tokenHash, tokenHash))
    if (!row) return null
    const idle = Date.now() - row.lastSeenAt.getTime()
    const age = Date.now() - row.createdAt.getTime()
    if (idle > this.idleMs || age > SESSION_MAX_AGE_MS || row.role !== row.openedAs) {
      await this.close(token)
      return null
    }
    if (idle > TOUCH_EVERY_MS) await this.db.update(dashboardSessions).set({ lastSeenAt: new Date() }).where(eq(dashboardSessions.tokenHash, tokenHash))
    return { caller: { accountId: row.accountId, livemode: true, user: { id: row.userId, role: row.role } }, csrfToken: row.csrfToken }
  }

  async close(token: string): Promise<void> {
    if (!TOKEN_PATTERN.test(token)) return
    await this.db.delete(dashboardSessions).where(eq(dashboardSessions.tokenHash, hashToken(token)))
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    dashboardSessions: DashboardSessions
  }
  interface FastifyRequest {
    /** The session's double-submit token, when a session cookie identified the caller. */
    sessionCsrfToken: string | null
  }
}

/** The two cookies' options: the whole site's, never sent by another site's page, over HTTPS only where the service is. */
const cookieOptions = (config: Config, httpOnly: boolean) => ({ path: '/', sameSite: 'strict', secure: config.dashboard.secureCookies, httpOnly }) as const

/** Sets the two cookies of a new session: the session's (HttpOnly) and the CSRF token's (readable by the page). */
export function setSessionCookies(reply: FastifyReply, config: Config, session: { token: string; csrfToken: string }): void {
  reply.setCookie(SESSION_COOKIE, session.token, cookieOptions(config, true))
  reply.setCookie(CSRF_COOKIE, session.csrfToken, cookieOptions(config, false))
}

export function clearSessionCookies(reply: FastifyReply, config: Config): void {
  reply.clearCookie(SESSION_COOKIE, cookieOptions(config, true))
  reply.clearCookie(CSRF_COOKIE, cookieOptions(config, false))
}

/** Reads the session cookie into `request.caller`, when no API key was sent. */
export async function identifySession(app: FastifyInstance, request: FastifyRequest): Promise<void> {
  const token = request.cookies[SESSION_COOKIE]
  if (!token) return
  const session = await app.dashboardSessions.identify(token)
  if (!session) return
  request.caller = session.caller
  request.sessionCsrfToken = session.csrfToken
}

const forbidden = (message: string) => new ApiError(403, message)

/**
 * Whether a browser request comes from a page of ours: its Origin is the service's public origin,
 * or the origin the request was sent to (scheme and Host: a service reached under several names,
 * or a local run on another port). Another site's form or script sends its own origin, which is
 * neither; a browser does not let a page set the Host of its requests, so the second cannot be
 * met from another site. A change by a session needs the CSRF token besides.
 */
export function requireSameOrigin(app: FastifyInstance, request: FastifyRequest): void {
  const origin = request.headers.origin
  if (!origin) throw forbidden('Falta la cabecera Origin: el panel solo acepta cambios enviados desde sus propias páginas')
  const own = [new URL(app.config.publicBaseUrl).origin, `${request.protocol}://${request.host}`]
  if (!own.includes(origin)) throw forbidden('La petición viene de otro sitio web y se ha rechazado')
}

function sameSecret(a: string, b: string): boolean {
  const [left, right] = [Buffer.from(a), Buffer.from(b)]
  return left.length === right.length && timingSafeEqual(left, right)
}

/**
 * For a caller signed in through the dashboard, a request that changes something must come from
 * our own page: its Origin, and a double-submit token (the `letters_csrf` cookie, which only a
 * page of our origin can read, sent back as X-CSRF-Token and matching the session's). A request
 * with an API key is not a browser's, and is not asked.
 */
export function requireCsrf(app: FastifyInstance) {
  return async (request: FastifyRequest) => {
    if (!request.caller?.user || request.method === 'GET' || request.method === 'HEAD') return
    requireSameOrigin(app, request)
    const header = request.headers['x-csrf-token']
    const cookie = request.cookies[CSRF_COOKIE]
    if (typeof header !== 'string' || !cookie || !request.sessionCsrfToken || !sameSecret(header, cookie) || !sameSecret(header, request.sessionCsrfToken)) {
      throw forbidden('Falta el token CSRF o no coincide; recarga la página e inténtalo de nuevo')
    }
  }
}
