import { Writable } from 'node:stream'
import { describe, expect, vi } from 'vitest'
import { eq, sql } from 'drizzle-orm'
import { dashboardSessions, dashboardUsers } from '@letters/db'
import { DashboardBrowser, GOOD_PASSWORD, invitationToken, inviteThroughAdmin, signedInUser } from '@letters/test/support/dashboard'
import { it as base } from '@letters/test/support/fixtures'
import { loggerOptions } from '@letters/observability'
import { adminAccount } from '@letters/test/support/accounts'
import { testConfig } from '@letters/test/support/context'
import { buildGateway } from '../src/server.js'
import { SESSION_MAX_AGE_MS } from '../src/common/sessions.js'
import { hashToken } from '../src/common/tokens.js'
import { passwordProblem } from '../src/features/dashboard/passwords.js'
import { expectError } from './helpers.js'

const MAX = 3
const WINDOW_MS = 3000
// Counters of its own (isolate: its own queue prefix): with a limit of 3, another file's failures
// from 127.0.0.1 in the same seconds would otherwise lock out this file's own admin calls.
const it = base.extend({ gatewayOptions: { isolate: 'signin', env: { AUTH_FAILURES_MAX: String(MAX), AUTH_FAILURES_WINDOW_MS: String(WINDOW_MS) } } })

/** A client address of its own per test: failures are counted per address. */
let lastAddress = 0
const newAddress = () => `198.18.29.${++lastAddress}`
const newEmail = (what: string) => `${what}-${crypto.randomUUID()}@example.com`

const WRONG = /^El correo electrónico o la contraseña no son correctos$/

describe('invitations', () => {
  it('answer 201 with a one-time link under /dashboard/ valid for 72 hours, and the page learns whose it is', async ({ gateway, account }) => {
    const email = newEmail('Ana')
    const before = Date.now()
    const invitation = await inviteThroughAdmin(gateway, account.id, `  ${email.toUpperCase()} `, 'member')
    expect(invitation).toEqual({ id: expect.any(String), email: email.toLowerCase(), role: 'member', invitationUrl: expect.any(String), emailed: false })
    expect(invitation.invitationUrl).toMatch(/^http:\/\/127\.0\.0\.1:3000\/dashboard\/invitacion#[A-Za-z0-9_-]{43}$/)
    const [stored] = await gateway.db.select().from(dashboardUsers).where(eq(dashboardUsers.id, invitation.id))
    // Only the token's hash is kept, and no password until the link is followed.
    expect(stored).toMatchObject({ invitationHash: hashToken(invitationToken(invitation)), passwordHash: null })
    expect(stored!.invitationExpiresAt!.getTime() - before).toBeGreaterThanOrEqual(72 * 3_600_000 - 1000)
    expect(stored!.invitationExpiresAt!.getTime() - before).toBeLessThanOrEqual(72 * 3_600_000 + 5000)

    const view = await new DashboardBrowser(gateway).lookUp(invitationToken(invitation))
    expect(view.statusCode).toBe(200)
    expect(view.json()).toEqual({
      email: email.toLowerCase(),
      accountName: 'Cliente de prueba',
      role: 'member',
      expiresAt: stored!.invitationExpiresAt!.toISOString(),
    })
  })

  it('set the password, sign in with HttpOnly, SameSite=Strict cookies, and work once', async ({ gateway, account }) => {
    const invitation = await inviteThroughAdmin(gateway, account.id, newEmail('luis'), 'viewer')
    const browser = new DashboardBrowser(gateway)
    const response = await browser.follow(invitationToken(invitation), GOOD_PASSWORD)
    expect(response.statusCode, response.body).toBe(200)
    expect(response.json()).toEqual({
      user: { id: invitation.id, email: invitation.email, role: 'viewer', accountId: account.id, accountName: 'Cliente de prueba' },
    })
    const cookies = Object.fromEntries((response.cookies as Array<{ name: string } & Record<string, unknown>>).map((cookie) => [cookie.name, cookie]))
    expect(cookies.letters_session).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/' })
    expect(cookies.letters_session!.secure).toBeFalsy()
    expect(cookies.letters_csrf).toMatchObject({ sameSite: 'Strict', path: '/' })
    expect(cookies.letters_csrf!.httpOnly).toBeFalsy()
    expect((await browser.get('/session')).json()).toMatchObject({ user: { email: invitation.email, role: 'viewer' } })

    const [stored] = await gateway.db.select().from(dashboardUsers).where(eq(dashboardUsers.id, invitation.id))
    expect(stored!.passwordHash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/)
    expect(stored!.passwordHash).not.toContain(GOOD_PASSWORD)
    expect(stored!.invitationHash).toBeNull()

    const again = new DashboardBrowser(gateway)
    expectError(await again.follow(invitationToken(invitation), 'otra frase larga de verdad 77'), 404, 'Not Found', /ya se usó o ha caducado/)
    expectError(await again.lookUp(invitationToken(invitation)), 404, 'Not Found')
  })

  it('refuse a short, common or guessable password, or one made of the email or the account’s name, with the reason, and keep the link usable', async ({
    gateway,
    account,
  }) => {
    const invitation = await inviteThroughAdmin(gateway, account.id, newEmail('marta'))
    const browser = new DashboardBrowser(gateway)
    const follow = (password: string) => browser.follow(invitationToken(invitation), password)
    expectError(await follow('corta123'), 400, 'Bad Request', 'La contraseña debe tener al menos 12 caracteres')
    expectError(await follow('password1234'), 400, 'Bad Request', 'Esa contraseña está en la lista de las más usadas; elige otra')
    expectError(await follow('qwertyuiopasdf'), 400, 'Bad Request', /^Esa contraseña es fácil de adivinar/)
    expectError(await follow('contraseña1234'), 400, 'Bad Request', /^Esa contraseña es fácil de adivinar/)
    // The email and the account's name, however written, with digits and signs around them.
    const ownDetails = /^La contraseña no puede ser el nombre de la cuenta o tu correo/
    expectError(await follow(`${invitation.email.split('@')[0]}2026`), 400, 'Bad Request', ownDetails)
    for (const password of ['Cliente de prueba 2026', 'clientedeprueba2026', 'ClienteDePrueba!!', `${invitation.email}!`])
      expectError(await follow(password), 400, 'Bad Request', ownDetails)
    // Words of the person's own around the name are a password.
    expect(passwordProblem('Cliente de prueba, mi tienda de la esquina', [invitation.email, 'Cliente de prueba'])).toBeNull()
    expect(browser.cookies.size).toBe(0)
    await browser.accept(invitation)
  })

  it('answer 404 to an unknown, malformed or expired link', async ({ gateway, account }) => {
    const browser = new DashboardBrowser(gateway)
    expectError(await browser.lookUp('A'.repeat(43)), 404, 'Not Found')
    expectError(await browser.lookUp('not-a-token'), 404, 'Not Found')
    const invitation = await inviteThroughAdmin(gateway, account.id, newEmail('caducada'))
    await gateway.db
      .update(dashboardUsers)
      .set({ invitationExpiresAt: new Date(Date.now() - 1000) })
      .where(eq(dashboardUsers.id, invitation.id))
    expectError(await browser.lookUp(invitationToken(invitation)), 404, 'Not Found')
    expectError(await browser.follow(invitationToken(invitation), GOOD_PASSWORD), 404, 'Not Found')
  })

  it('give a new link to someone invited again before following the first, and refuse an email that already has a user', async ({
    gateway,
    account,
    admin,
  }) => {
    const email = newEmail('repetida')
    const first = await inviteThroughAdmin(gateway, account.id, email, 'viewer')
    const second = await inviteThroughAdmin(gateway, account.id, email, 'member')
    expect(second.id).toBe(first.id)
    expectError(await new DashboardBrowser(gateway).lookUp(invitationToken(first)), 404, 'Not Found')
    expect(await new DashboardBrowser(gateway).accept(second)).toMatchObject({ role: 'member' })

    expectError(await admin.post(`/admin/accounts/${account.id}/users`, { email, role: 'owner' }), 409, 'Conflict', `Ya hay un usuario con el correo ${email}`)
    const other = (await admin.post('/admin/accounts', { name: 'Otra' })).json<{ id: string }>()
    expectError(await admin.post(`/admin/accounts/${other.id}/users`, { email, role: 'owner' }), 409, 'Conflict')
  })

  it('let an invitation left to expire in another account be given again, so that no one holds an address they do not answer at', async ({
    gateway,
    account,
    admin,
  }) => {
    const email = newEmail('ocupada')
    const squatted = await inviteThroughAdmin(gateway, account.id, email, 'viewer')
    const other = (await admin.post('/admin/accounts', { name: 'Dueña real' })).json<{ id: string }>()
    // Pending and unexpired, it is still the first account's.
    expectError(await admin.post(`/admin/accounts/${other.id}/users`, { email, role: 'owner' }), 409, 'Conflict')
    await gateway.db
      .update(dashboardUsers)
      .set({ invitationExpiresAt: new Date(Date.now() - 1000) })
      .where(eq(dashboardUsers.id, squatted.id))
    const given = await inviteThroughAdmin(gateway, other.id, email, 'owner')
    expect(await new DashboardBrowser(gateway).accept(given)).toMatchObject({ role: 'owner' })
    expect((await new DashboardBrowser(gateway).signIn(email)).accountId).toBe(other.id)
  })

  it.for([
    [{ email: 'ana@example.com' }, "El campo 'role' es obligatorio"],
    [{ email: 'ana@example.com,spy@evil.example', role: 'owner' }, "El campo 'email' debe ser una dirección de correo electrónico"],
    [{ email: 'spy:x@evil.example', role: 'owner' }, "El campo 'email' debe ser una dirección de correo electrónico"],
    [{ email: 'no es un correo', role: 'owner' }, "El campo 'email' debe ser una dirección de correo electrónico (como ana@example.com)"],
    [{ email: 'ana@example.com', role: 'admin' }, "El campo 'role' debe ser 'owner', 'member' o 'viewer'"],
    [{ email: 'ana@example.com', role: 'owner', password: 'x' }, "El campo 'password' no está permitido"],
  ] as const)('refuse %j with 400', async ([body, message], { admin, account }) => {
    expectError(await admin.post(`/admin/accounts/${account.id}/users`, body), 400, 'Bad Request', message)
  })

  it('answer 404 for an unknown account', async ({ admin }) => {
    expectError(await admin.post('/admin/accounts/00000000-0000-4000-8000-000000000000/users', { email: newEmail('x'), role: 'owner' }), 404, 'Not Found')
  })
})

describe('signing in', () => {
  it('gives a wrong password and an unknown email the same 401, and signs in with the right one', async ({ gateway, account }) => {
    const { email } = await signedInUser(gateway, account.id, 'member')
    const browser = new DashboardBrowser(gateway, undefined, newAddress())
    expectError(await browser.post('/session', { email, password: 'not the right password' }), 401, 'Unauthorized', WRONG)
    expectError(await browser.post('/session', { email: newEmail('nadie'), password: GOOD_PASSWORD }), 401, 'Unauthorized', WRONG)
    // Someone invited who has not set a password yet cannot sign in either.
    const pending = await inviteThroughAdmin(gateway, account.id, newEmail('pendiente'))
    expectError(
      await new DashboardBrowser(gateway, undefined, newAddress()).post('/session', { email: pending.email, password: GOOD_PASSWORD }),
      401,
      'Unauthorized',
      WRONG,
    )
    expect(browser.cookies.size).toBe(0)
    expect(await browser.signIn(email.toUpperCase())).toMatchObject({ email, role: 'member' })
    expect((await browser.get('/cards')).statusCode).toBe(200)
  })

  it('throttles failures per email, from any address, until the window ends; other emails from those addresses still sign in', async ({ gateway, account }) => {
    const target = await signedInUser(gateway, account.id, 'owner')
    const bystander = await signedInUser(gateway, account.id, 'member')
    for (let i = 0; i < MAX; i++) {
      expectError(
        await new DashboardBrowser(gateway, undefined, newAddress()).post('/session', { email: target.email, password: `guess number ${i} here` }),
        401,
        'Unauthorized',
      )
    }
    // Even the right password, from an address never seen, waits: a guess that happens to be right learns nothing.
    const late = await new DashboardBrowser(gateway, undefined, newAddress()).post('/session', { email: target.email, password: GOOD_PASSWORD })
    expectError(late, 429, 'Too Many Requests', /^Demasiados intentos de autenticación fallidos con este correo electrónico; inténtalo de nuevo en \d+ s$/)
    expect(Number(late.headers['retry-after'])).toBeLessThanOrEqual(WINDOW_MS / 1000)
    // The sessions already open are not touched, and another person signs in.
    expect((await target.browser.get('/cards')).statusCode).toBe(200)
    await new DashboardBrowser(gateway, undefined, newAddress()).signIn(bystander.email)

    await vi.waitFor(
      async () =>
        expect(
          (await new DashboardBrowser(gateway, undefined, newAddress()).post('/session', { email: target.email, password: GOOD_PASSWORD })).statusCode,
        ).toBe(200),
      {
        timeout: WINDOW_MS + 3000,
        interval: 250,
      },
    )
  })

  it('throttles failures per address across emails, and locks no other kind of credential out of that address', async ({ gateway, account }) => {
    const person = await signedInUser(gateway, account.id, 'member')
    const address = newAddress()
    for (let i = 0; i < MAX; i++) {
      expectError(
        await new DashboardBrowser(gateway, undefined, address).post('/session', { email: newEmail(`guess${i}`), password: GOOD_PASSWORD }),
        401,
        'Unauthorized',
      )
    }
    const blocked = await new DashboardBrowser(gateway, undefined, address).post('/session', { email: person.email, password: GOOD_PASSWORD })
    expectError(blocked, 429, 'Too Many Requests', /^Demasiados intentos de autenticación fallidos desde esta dirección/)
    // The same person from elsewhere, and an API key from this address, are not affected.
    await new DashboardBrowser(gateway, undefined, newAddress()).signIn(person.email)
    expect((await gateway.inject({ method: 'GET', url: '/campaigns', remoteAddress: address, headers: { 'x-api-key': account.apiKey } })).statusCode).toBe(200)
  })

  it('refuses a sign-in posted by another site, before any password is checked', async ({ gateway, account }) => {
    const { email } = await signedInUser(gateway, account.id, 'member')
    const evil = new DashboardBrowser(gateway, 'https://evil.example', newAddress())
    expectError(await evil.post('/session', { email, password: GOOD_PASSWORD }), 403, 'Forbidden', 'La petición viene de otro sitio web y se ha rechazado')
    expectError(await evil.post('/session', { email, password: GOOD_PASSWORD }, { origin: '' }), 403, 'Forbidden', /^Falta la cabecera Origin/)
    expect(evil.cookies.size).toBe(0)
  })

  it('answers 401 to GET /session without a session, and 400 to a body it cannot read', async ({ gateway }) => {
    const browser = new DashboardBrowser(gateway)
    expectError(await browser.get('/session'), 401, 'Unauthorized', 'No has iniciado sesión en el panel, o la sesión ha caducado')
    expectError(await browser.post('/session', { email: 'a@example.com' }), 400, 'Bad Request', "El campo 'password' es obligatorio")
  })
})

describe('signing in, under guesses sent all at once', () => {
  it('checks at most AUTH_FAILURES_MAX passwords per window from one address, however many arrive together', async ({ gateway, account }) => {
    const { email } = await signedInUser(gateway, account.id, 'member')
    const address = newAddress()
    const guesses = Array.from({ length: 40 }, (_, i) => (i === 39 ? GOOD_PASSWORD : `guess number ${i} here`))
    const answers = await Promise.all(guesses.map((password) => new DashboardBrowser(gateway, undefined, address).post('/session', { email, password })))
    const statuses = answers.map((answer) => answer.statusCode)
    expect(
      statuses.every((status) => [200, 401, 429].includes(status)),
      statuses.join(','),
    ).toBe(true)
    // Every answer but a 429 is a password checked.
    expect(statuses.filter((status) => status !== 429).length, statuses.join(',')).toBeLessThanOrEqual(MAX)
  })

  it('checks at most AUTH_FAILURES_MAX passwords per window for one email, from as many addresses as the guesser has', async ({ gateway, account }) => {
    const { email } = await signedInUser(gateway, account.id, 'member')
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        new DashboardBrowser(gateway, undefined, newAddress()).post('/session', { email, password: i === 39 ? GOOD_PASSWORD : `guess ${i} of many` }),
      ),
    )
    const statuses = answers.map((answer) => answer.statusCode)
    expect(statuses.filter((status) => status !== 429).length, statuses.join(',')).toBeLessThanOrEqual(MAX)
  })

  it('gives a right password its slot back: one person signing in again and again is never throttled', async ({ gateway, account }) => {
    const { email } = await signedInUser(gateway, account.id, 'member')
    const address = newAddress()
    for (let i = 0; i < 3 * MAX; i++) await new DashboardBrowser(gateway, undefined, address).signIn(email)
  })

  it('answers 401, not 500, to a sign-in whose user is removed while its session is being opened', async ({ gateway, account }) => {
    const member = await signedInUser(gateway, account.id, 'member')
    let removed!: () => void
    let commit!: () => void
    const isRemoved = new Promise<void>((resolve) => (removed = resolve))
    const mayCommit = new Promise<void>((resolve) => (commit = resolve))
    // The removal has run but not committed: opening the session must wait for it and then see it.
    const removal = gateway.db.transaction(async (tx) => {
      await tx.delete(dashboardUsers).where(eq(dashboardUsers.id, member.user.id))
      removed()
      await mayCommit
    })
    await isRemoved
    const signIn = new DashboardBrowser(gateway, undefined, newAddress()).post('/session', { email: member.email, password: GOOD_PASSWORD })
    await vi.waitFor(
      async () => {
        const [waiting] = await gateway.db.execute<{ count: number }>(
          sql`SELECT count(*)::int AS count FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query ILIKE '%dashboard_sessions%'`,
        )
        expect(waiting!.count).toBe(1)
      },
      { timeout: 10_000, interval: 20 },
    )
    commit()
    await removal
    expectError(await signIn, 401, 'Unauthorized', WRONG)
  })

  it('never answers 500 when a sign-in races the removal of its user', async ({ gateway, account }) => {
    const owner = await signedInUser(gateway, account.id, 'owner')
    for (let round = 0; round < 8; round++) {
      const member = await signedInUser(gateway, account.id, 'member')
      const browser = new DashboardBrowser(gateway, undefined, newAddress())
      const [signIn, removal] = await Promise.all([
        browser.post('/session', { email: member.email, password: GOOD_PASSWORD }),
        owner.browser.delete(`/users/${member.user.id}`),
      ])
      expect(removal.statusCode).toBe(204)
      expect([200, 401]).toContain(signIn.statusCode)
      // Whatever the order, the removed person's browser opens nothing afterwards.
      expectError(await browser.get('/cards'), 401, 'Unauthorized')
    }
  })
})

describe('a session', () => {
  it('authenticates the public API as its account, with the same answers an API key gets', async ({ gateway, account, client }) => {
    const { browser } = await signedInUser(gateway, account.id, 'member')
    const sent = await browser.post('/single', { ...singleBody(account) })
    expect(sent.statusCode, sent.body).toBe(200)
    const cardId = sent.json<{ cardId: string }>().cardId
    expect((await browser.get(`/cards/${cardId}`)).json()).toEqual((await client.get(`/cards/${cardId}`)).json())
    expectError(await browser.post('/single', { ...singleBody(account), zip: undefined }), 400, 'Bad Request', "El campo 'zip' es obligatorio")
  })

  it('lets a viewer read but answers its writes 403 with the Error object, and keeps people and keys to a signed-in owner', async ({ gateway, account }) => {
    const viewer = await signedInUser(gateway, account.id, 'viewer')
    expect((await viewer.browser.get('/cards')).statusCode).toBe(200)
    expect((await viewer.browser.get('/balance')).statusCode).toBe(200)
    expectError(await viewer.browser.post('/single', singleBody(account)), 403, 'Forbidden', /^Tu rol \(lector\) no permite esta acción/)
    expectError(await viewer.browser.post('/webhooks', { url: 'https://example.com/hook' }), 403, 'Forbidden')
    const member = await signedInUser(gateway, account.id, 'member')
    expectError(await member.browser.post('/webhooks', { url: 'https://example.com/hook' }), 403, 'Forbidden', /^Tu rol \(miembro\) no permite/)
    expect((await member.browser.get('/webhooks')).statusCode).toBe(200)
    expectError(await member.browser.get('/users'), 403, 'Forbidden')
    expectError(await member.browser.get('/api-keys'), 403, 'Forbidden')
    // An API key acts for its account, but never manages keys or people.
    const withKey = (method: 'GET' | 'POST', url: string) =>
      gateway.inject({ method, url, headers: { 'x-api-key': account.apiKey }, ...(method === 'POST' ? { payload: { mode: 'live' } } : {}) })
    expectError(await withKey('GET', '/users'), 403, 'Forbidden', /se gestionan desde el panel/)
    expectError(await withKey('POST', '/api-keys'), 403, 'Forbidden', /se gestionan desde el panel/)
  })

  it('refuses a change without the CSRF token, with another token, or from another origin; an API key is not asked for either', async ({
    gateway,
    account,
  }) => {
    const { browser } = await signedInUser(gateway, account.id, 'owner')
    const csrf = browser.cookies.get('letters_csrf')!
    expectError(await browser.post('/api-keys', { mode: 'test' }, { 'x-csrf-token': '' }), 403, 'Forbidden', /^Falta el token CSRF/)
    expectError(await browser.post('/api-keys', { mode: 'test' }, { 'x-csrf-token': `${csrf.slice(0, -1)}x` }), 403, 'Forbidden', /^Falta el token CSRF/)
    expectError(await browser.post('/api-keys', { mode: 'test' }, { 'x-csrf-token': 'ñ'.repeat(43) }), 403, 'Forbidden', /^Falta el token CSRF/)
    expectError(
      await browser.post('/api-keys', { mode: 'test' }, { origin: 'https://evil.example' }),
      403,
      'Forbidden',
      'La petición viene de otro sitio web y se ha rechazado',
    )
    // Another site's form: the browser sends the session cookie, but neither our origin nor the token.
    const form = await gateway.inject({
      method: 'POST',
      url: '/single',
      headers: { cookie: `letters_session=${browser.cookies.get('letters_session')}`, origin: 'https://evil.example', 'content-type': 'application/json' },
      payload: JSON.stringify(singleBody(account)),
    })
    expectError(form, 403, 'Forbidden')
    expect((await gateway.db.execute<{ n: number }>(sql`SELECT count(*)::int AS n FROM letters WHERE account_id = ${account.id}`))[0]!.n).toBe(0)
    // A token that matches its cookie but is not the session's is refused too.
    expectError(
      await browser.post(
        '/api-keys',
        { mode: 'test' },
        { 'x-csrf-token': 'B'.repeat(43), cookie: `letters_session=${browser.cookies.get('letters_session')}; letters_csrf=${'B'.repeat(43)}` },
      ),
      403,
      'Forbidden',
    )
    expect((await browser.post('/api-keys', { mode: 'test' })).statusCode).toBe(201)
    const keyed = await gateway.inject({
      method: 'POST',
      url: '/single',
      headers: { 'x-api-key': account.apiKey, origin: 'https://evil.example' },
      payload: singleBody(account),
    })
    expect(keyed.statusCode).toBe(200)
  })

  it('ends after DASHBOARD_SESSION_IDLE_MS unused, and is kept alive by use', async ({ gateway, account }) => {
    const { browser, user } = await signedInUser(gateway, account.id, 'member')
    const idleMs = gateway.config.dashboard.sessionIdleMs
    // Used two minutes ago: still open, and its last use moves to now.
    await gateway.db
      .update(dashboardSessions)
      .set({ lastSeenAt: new Date(Date.now() - 120_000) })
      .where(eq(dashboardSessions.userId, user.id))
    expect((await browser.get('/cards')).statusCode).toBe(200)
    const [touched] = await gateway.db.select().from(dashboardSessions).where(eq(dashboardSessions.userId, user.id))
    expect(Date.now() - touched!.lastSeenAt.getTime()).toBeLessThan(30_000)
    await gateway.db
      .update(dashboardSessions)
      .set({ lastSeenAt: new Date(Date.now() - idleMs - 1000) })
      .where(eq(dashboardSessions.userId, user.id))
    expectError(await browser.get('/cards'), 401, 'Unauthorized')
    expectError(await browser.get('/session'), 401, 'Unauthorized')
    expect(await gateway.db.select().from(dashboardSessions).where(eq(dashboardSessions.userId, user.id))).toEqual([])
  })

  it("ends 30 days after it was opened however much it is used, and a sign-in clears anyone's sessions left unused", async ({ gateway, account }) => {
    const { browser, user } = await signedInUser(gateway, account.id, 'member')
    const stale = await signedInUser(gateway, account.id, 'viewer')
    await gateway.db
      .update(dashboardSessions)
      .set({ lastSeenAt: new Date(Date.now() - gateway.config.dashboard.sessionIdleMs - 1000) })
      .where(eq(dashboardSessions.userId, stale.user.id))
    await gateway.db
      .update(dashboardSessions)
      .set({ createdAt: new Date(Date.now() - SESSION_MAX_AGE_MS + 60_000) })
      .where(eq(dashboardSessions.userId, user.id))
    expect((await browser.get('/cards')).statusCode).toBe(200)
    await gateway.db
      .update(dashboardSessions)
      .set({ createdAt: new Date(Date.now() - SESSION_MAX_AGE_MS - 1000) })
      .where(eq(dashboardSessions.userId, user.id))
    expectError(await browser.get('/cards'), 401, 'Unauthorized', /La sesión del panel ha caducado/)
    // The viewer's unused session is gone as soon as anyone signs in.
    await new DashboardBrowser(gateway, undefined, newAddress()).signIn((await signedInUser(gateway, account.id, 'member')).email)
    expect(await gateway.db.select().from(dashboardSessions).where(eq(dashboardSessions.userId, stale.user.id))).toEqual([])
  })

  it('says the session ended, not that a key is missing, when its cookie no longer opens one', async ({ gateway, account }) => {
    const { browser, user } = await signedInUser(gateway, account.id, 'member')
    await gateway.db.delete(dashboardSessions).where(eq(dashboardSessions.userId, user.id))
    expectError(await browser.get('/cards'), 401, 'Unauthorized', 'La sesión del panel ha caducado o se ha cerrado; vuelve a entrar')
    expectError(await new DashboardBrowser(gateway).get('/cards'), 401, 'Unauthorized', /X-API-KEY/)
  })

  it('is replaced by signing in again in the same browser, and kept by a change to the role its user already has', async ({ gateway, account }) => {
    const owner = await signedInUser(gateway, account.id, 'owner')
    const before = owner.browser.cookies.get('letters_session')!
    await owner.browser.signIn(owner.email)
    const replay = await gateway.inject({ method: 'GET', url: '/cards', headers: { cookie: `letters_session=${before}` } })
    expectError(replay, 401, 'Unauthorized')
    expect((await owner.browser.patch(`/users/${owner.user.id}`, { role: 'owner' })).json()).toMatchObject({ role: 'owner' })
    expect((await owner.browser.get('/users')).statusCode).toBe(200)
  })

  it('ends when its user is demoted or removed, and at "Salir"', async ({ gateway, account }) => {
    const owner = await signedInUser(gateway, account.id, 'owner')
    const member = await signedInUser(gateway, account.id, 'member')
    const laterTab = new DashboardBrowser(gateway)
    await laterTab.signIn(member.email)
    expect((await owner.browser.patch(`/users/${member.user.id}`, { role: 'viewer' })).statusCode).toBe(200)
    expectError(await member.browser.get('/cards'), 401, 'Unauthorized')
    expectError(await laterTab.get('/cards'), 401, 'Unauthorized')
    // Signing in again gives the new role.
    expect(await member.browser.signIn(member.email)).toMatchObject({ role: 'viewer' })
    expect((await owner.browser.delete(`/users/${member.user.id}`)).statusCode).toBe(204)
    expectError(await member.browser.get('/cards'), 401, 'Unauthorized')
    expectError(
      await new DashboardBrowser(gateway, undefined, newAddress()).post('/session', { email: member.email, password: GOOD_PASSWORD }),
      401,
      'Unauthorized',
      WRONG,
    )

    const oldToken = owner.browser.cookies.get('letters_session')
    const signOut = await owner.browser.delete('/session')
    expect(signOut.statusCode).toBe(204)
    expect(owner.browser.cookies.size).toBe(0)
    expectError(await owner.browser.get('/session'), 401, 'Unauthorized')
    // The old cookie, replayed, opens nothing.
    const replay = await gateway.inject({ method: 'GET', url: '/cards', headers: { cookie: `letters_session=${oldToken}` } })
    expectError(replay, 401, 'Unauthorized')
  })
})

function singleBody(account: { cardDesignId: string; envelopeDesignId: string; senderId: string }) {
  return {
    cardDesignId: account.cardDesignId,
    envelopeDesignId: account.envelopeDesignId,
    senderId: account.senderId,
    message: 'Gracias por tu pedido',
    name: 'Lucía',
    surname: 'García',
    address: 'Calle Mayor 1',
    zip: '28013',
    city: 'Madrid',
    country: 'ES',
  }
}

describe('what the logs keep', () => {
  it('holds no invitation token, password, session or CSRF token, though every request is logged', async () => {
    const lines: string[] = []
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString())
        done()
      },
    })
    const app = await buildGateway({ config: testConfig(), logger: { ...loggerOptions('gateway', 'info'), stream: sink } })
    try {
      await app.ready()
      const account = await adminAccount(app, 0)
      const invitation = await inviteThroughAdmin(app, account.id, newEmail('registro'), 'owner')
      const browser = new DashboardBrowser(app)
      expect((await browser.lookUp(invitationToken(invitation))).statusCode).toBe(200)
      expectError(await browser.follow(invitationToken(invitation), 'corta'), 400, 'Bad Request')
      await browser.accept(invitation)
      await browser.signIn(invitation.email)
      expect((await browser.post('/api-keys', { mode: 'test' })).statusCode).toBe(201)
      const logged = lines.join('')
      expect(logged).toContain('/invitations/accept')
      for (const secret of [invitationToken(invitation), GOOD_PASSWORD, browser.cookies.get('letters_session')!, browser.cookies.get('letters_csrf')!]) {
        expect(logged).not.toContain(secret)
      }
      expect(logged).not.toContain('$argon2id$')
    } finally {
      await app.close()
    }
  })
})
