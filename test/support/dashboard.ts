import { expect } from 'vitest'
import type { DashboardRole } from '@letters/contracts'
import type { App } from '@letters/gateway/server'
import { ADMIN_TOKEN } from './admin-token.js'

/** A password that passes the dashboard's checks (long, not common, not guessable). */
export const GOOD_PASSWORD = 'lámpara verde sobre el tejado 42'

/** The origin the test gateways serve the dashboard from (PUBLIC_BASE_URL's default). */
export const DASHBOARD_ORIGIN = 'http://127.0.0.1:3000'

export interface DashboardInvitation {
  id: string
  email: string
  role: DashboardRole
  invitationUrl: string
  emailed: boolean
}

/** Invites `email` to the account through the admin API, as ops do for an account's first owner. */
export async function inviteThroughAdmin(app: Pick<App, 'inject'>, accountId: string, email: string, role: DashboardRole = 'owner') {
  const response = await app.inject({
    method: 'POST',
    url: `/admin/accounts/${accountId}/users`,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    payload: { email, role },
  })
  expect(response.statusCode, response.body).toBe(201)
  return response.json<DashboardInvitation>()
}

/** The token an invitation's link carries, after its `#`. */
export const invitationToken = (invitation: { invitationUrl: string }) => new URL(invitation.invitationUrl).hash.slice(1)

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE'

/**
 * A browser on the dashboard, over `inject`: it keeps the cookies the gateway sets, sends its own
 * Origin, and the CSRF token (read from its cookie, as the page does) on every change.
 */
export class DashboardBrowser {
  readonly cookies = new Map<string, string>()

  constructor(
    private readonly app: Pick<App, 'inject'>,
    readonly origin = DASHBOARD_ORIGIN,
    /** The client's address, as the gateway sees it (the throttle counts per address). */
    readonly remoteAddress = '127.0.0.1',
  ) {}

  async request(method: Method, url: string, payload?: unknown, headers: Record<string, string> = {}) {
    const changes = method !== 'GET'
    const response = await this.app.inject({
      method,
      url,
      remoteAddress: this.remoteAddress,
      headers: {
        ...(this.cookies.size > 0 ? { cookie: [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ') } : {}),
        ...(changes ? { origin: this.origin } : {}),
        ...(changes && this.cookies.has('letters_csrf') ? { 'x-csrf-token': this.cookies.get('letters_csrf')! } : {}),
        ...headers,
      },
      ...(payload === undefined ? {} : { payload: payload as object }),
    })
    for (const cookie of response.cookies as Array<{ name: string; value: string; maxAge?: number; expires?: Date }>) {
      const cleared = cookie.value === '' || cookie.maxAge === 0 || (cookie.expires !== undefined && cookie.expires.getTime() <= Date.now())
      if (cleared) this.cookies.delete(cookie.name)
      else this.cookies.set(cookie.name, cookie.value)
    }
    return response
  }

  get = (url: string, headers?: Record<string, string>) => this.request('GET', url, undefined, headers)
  post = (url: string, payload?: unknown, headers?: Record<string, string>) => this.request('POST', url, payload ?? {}, headers)
  patch = (url: string, payload?: unknown, headers?: Record<string, string>) => this.request('PATCH', url, payload ?? {}, headers)
  delete = (url: string, headers?: Record<string, string>) => this.request('DELETE', url, undefined, headers)

  /** What the invitation page asks of the link: whose it is. */
  lookUp = (token: string) => this.post('/invitations/lookup', { token })
  /** Follows a link's token with `password`, as the invitation page does. */
  follow = (token: string, password: string) => this.post('/invitations/accept', { token, password })

  async signIn(email: string, password = GOOD_PASSWORD) {
    const response = await this.post('/session', { email, password })
    expect(response.statusCode, response.body).toBe(200)
    return response.json<{ user: { id: string; email: string; role: DashboardRole; accountId: string; accountName: string } }>().user
  }

  /** Follows an invitation with `password`, as its page does; signed in afterwards. */
  async accept(invitation: { invitationUrl: string }, password = GOOD_PASSWORD) {
    const response = await this.post('/invitations/accept', { token: invitationToken(invitation), password })
    expect(response.statusCode, response.body).toBe(200)
    return response.json<{ user: { id: string; role: DashboardRole } }>().user
  }
}

/** A person of the account, invited through the admin API and signed in: their browser. */
export async function signedInUser(
  app: Pick<App, 'inject'>,
  accountId: string,
  role: DashboardRole = 'owner',
  email = `${role}-${crypto.randomUUID()}@example.com`,
) {
  const browser = new DashboardBrowser(app)
  const invitation = await inviteThroughAdmin(app, accountId, email, role)
  const user = await browser.accept(invitation)
  return { browser, user, email }
}

/** What a person signs in with: their email, and GOOD_PASSWORD unless said otherwise. */
export interface Credentials {
  email: string
  password?: string
}

/**
 * A new person of the account with GOOD_PASSWORD, to sign in with elsewhere (a browser tab):
 * invited through the admin API as `role`, the link followed over inject. With `signOut`, the
 * session that following the link opened is ended, so that the person's only session is the one a
 * test opens.
 */
export async function newUser(
  app: Pick<App, 'inject'>,
  accountId: string,
  role: DashboardRole = 'owner',
  { email = `${role}-${crypto.randomUUID().slice(0, 8)}@example.com`, signOut = false }: { email?: string; signOut?: boolean } = {},
) {
  const { browser, user } = await signedInUser(app, accountId, role, email)
  if (signOut) expect((await browser.delete('/session')).statusCode).toBe(204)
  return { id: user.id, email, password: GOOD_PASSWORD }
}
