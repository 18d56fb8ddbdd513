/**
 * What a dashboard user may do in its account, the one list: the database column, the API's
 * schemas and the gateway's access check are derived from it.
 * - `owner`: everything, the team, API keys and webhook endpoints included;
 * - `member`: sends, cancels and uploads, and reads everything but the team and the keys;
 * - `viewer`: reads only.
 */
export const dashboardRoles = ['owner', 'member', 'viewer'] as const
export type DashboardRole = (typeof dashboardRoles)[number]

/** Each role as people read it in Spanish. */
export const dashboardRoleNames: Record<DashboardRole, string> = {
  owner: 'propietario',
  member: 'miembro',
  viewer: 'lector',
}

/**
 * What a route asks of its caller: `read` any role, `write` a member or an owner, `owner` an
 * owner only. An API key acts for its whole account, as an owner, except where a route says
 * `session-owner`: managing keys and people is done by a person signed in, so that a leaked key
 * cannot mint another or invite someone.
 */
export const routeAccesses = ['read', 'write', 'owner', 'session-owner'] as const
export type RouteAccess = (typeof routeAccesses)[number]

/** Whether a dashboard role may call a route that asks for `access`. */
export function roleAllows(role: DashboardRole, access: RouteAccess): boolean {
  switch (access) {
    case 'read':
      return true
    case 'write':
      return role !== 'viewer'
    case 'owner':
    case 'session-owner':
      return role === 'owner'
  }
}

/** The dashboard session's cookie: HttpOnly, the page never reads it. */
export const SESSION_COOKIE = 'letters_session'
/** The double-submit token's cookie: the page reads it and sends it back as X-CSRF-Token. */
export const CSRF_COOKIE = 'letters_csrf'
