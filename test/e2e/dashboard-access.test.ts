/**
 * The dashboard in a real browser (Debian's chromium through playwright-core), on the running
 * stack: who gets in and who does not. Following an invitation, signing in and out, the throttle
 * after wrong passwords, what a viewer sees and may do, another site's requests, and a session
 * that ran out. Each test checks what the page shows and what the gateway stored.
 */
import { createServer } from 'node:http'
import { once } from 'node:events'
import { describe, expect, onTestFinished, vi } from 'vitest'
import { and, eq } from 'drizzle-orm'
import type { Page, Request } from 'playwright-core'
import { apiKeys, dashboardSessions, dashboardUsers, letters, type Db } from '@letters/db'
import { adminAccount } from '../support/accounts.js'
import { DASHBOARD_ORIGIN, DashboardBrowser, GOOD_PASSWORD, invitationToken, inviteThroughAdmin, newUser } from '../support/dashboard.js'
import { singleLetter } from '../support/factories.js'
import { adminCampaign, publicClient } from '../support/gateway.js'
import { until } from '../support/wait.js'
import { dashboardTest, failedLoad, heading, openTab, signedInTab, unexpected } from '../support/dashboard-browser.js'

/** Three wrong passwords a window, and a window longer than the SDK's longest wait before a retry (30 s): the page shows the 429 at once. */
const FAILURES_MAX = 3
const FAILURES_WINDOW_MS = 45_000

const it = dashboardTest({
  label: 'dashboard-access',
  env: { AUTH_FAILURES_MAX: String(FAILURES_MAX), AUTH_FAILURES_WINDOW_MS: String(FAILURES_WINDOW_MS) },
})

// A browser on a 2-core machine beside three other files: seconds per page, not milliseconds.
vi.setConfig({ testTimeout: 180_000 })

const nav = (page: Page) => page.getByRole('navigation', { name: 'Principal' })
const alert = (page: Page) => page.getByRole('alert')

/** A person of the account with a password: invited through the admin API, the link followed over inject, then signed out there. */
const person = (app: Parameters<typeof inviteThroughAdmin>[0], accountId: string, role: 'owner' | 'member' | 'viewer') =>
  newUser(app, accountId, role, { signOut: true })

const sessionsOf = (db: Db, userId: string) => db.select().from(dashboardSessions).where(eq(dashboardSessions.userId, userId))

describe('signing in to the dashboard', () => {
  it('follows an invitation (refusing two different passwords in the page and a short one with the server’s reason), lands on Inicio, and signs out and in', async ({
    pipeline,
    baseUrl,
    browser,
  }) => {
    const account = await adminAccount(pipeline.app, 50, 'Papelería Luna', { name: 'Papelería Luna' })
    const invitation = await inviteThroughAdmin(pipeline.app, account.id, `ana-${crypto.randomUUID().slice(0, 8)}@example.com`, 'owner')
    // The link names the service's public address (PUBLIC_BASE_URL, localhost:3000 here): the same path and token on the listening gateway.
    const link = new URL(invitation.invitationUrl)
    expect(link.pathname).toBe('/dashboard/invitacion')
    const { context, page, problems } = await openTab(browser, baseUrl)
    const invitationPosts: number[] = []
    page.on('response', (response) => {
      if (new URL(response.url()).pathname === '/invitations/accept') invitationPosts.push(response.status())
    })
    await page.goto(`${baseUrl}${link.pathname}${link.hash}`)

    await heading(page, 'Crea tu acceso').waitFor()
    await page.getByText(invitation.email, { exact: true }).waitFor()
    await page.getByText('Papelería Luna', { exact: true }).waitFor()

    // Two different passwords: refused in the page, beside the second field, without asking the server.
    await page.getByLabel('Contraseña', { exact: true }).fill(GOOD_PASSWORD)
    await page.getByLabel('Repite la contraseña').fill(`${GOOD_PASSWORD}!`)
    await page.getByRole('button', { name: 'Crear acceso' }).click()
    const repeated = page.getByLabel('Repite la contraseña')
    await page.getByText('Las dos contraseñas no coinciden.').waitFor()
    expect(await repeated.getAttribute('aria-invalid')).toBe('true')
    await expect.poll(() => repeated.evaluate((input) => input === input.ownerDocument.activeElement)).toBe(true)
    expect(invitationPosts).toEqual([])

    // A short one: the server's reason, in the page.
    await page.getByLabel('Contraseña', { exact: true }).fill('corta123')
    await repeated.fill('corta123')
    await page.getByRole('button', { name: 'Crear acceso' }).click()
    await alert(page).getByText('La contraseña debe tener al menos 12 caracteres').waitFor()
    expect(invitationPosts).toEqual([400])
    const [pending] = await pipeline.app.db.select().from(dashboardUsers).where(eq(dashboardUsers.id, invitation.id))
    expect(pending!.passwordHash).toBeNull()

    await page.getByLabel('Contraseña', { exact: true }).fill(GOOD_PASSWORD)
    await repeated.fill(GOOD_PASSWORD)
    await page.getByRole('button', { name: 'Crear acceso' }).click()
    await heading(page, 'Inicio').waitFor()
    expect(new URL(page.url()).pathname).toMatch(/^\/dashboard\/?$/)
    await page.getByText(invitation.email, { exact: true }).waitFor()
    const [accepted] = await pipeline.app.db.select().from(dashboardUsers).where(eq(dashboardUsers.id, invitation.id))
    expect(accepted!.passwordHash).toMatch(/^\$argon2id\$/)
    expect(accepted!.invitationHash).toBeNull()
    expect(await sessionsOf(pipeline.app.db, invitation.id)).toHaveLength(1)

    // Out: the sign-in page, the session gone from the browser and from the database.
    const signOut = async () => {
      await page.getByRole('button', { name: 'Salir' }).click()
      await heading(page, 'Entrar en tu cuenta').waitFor()
      expect((await context.cookies()).map((cookie) => cookie.name)).not.toContain('letters_session')
      await expect.poll(async () => (await sessionsOf(pipeline.app.db, invitation.id)).length).toBe(0)
      expect((await context.request.get(`${baseUrl}/session`)).status()).toBe(401)
      expect(await page.evaluate(async () => (await fetch('/session')).status)).toBe(401)
    }
    await signOut()

    // In again, with the password just chosen.
    await page.getByLabel('Correo electrónico').fill(invitation.email)
    await page.getByLabel('Contraseña', { exact: true }).fill(GOOD_PASSWORD)
    await page.getByRole('button', { name: 'Entrar' }).click()
    await heading(page, 'Inicio').waitFor()
    expect((await context.cookies()).find((cookie) => cookie.name === 'letters_session')).toMatchObject({ httpOnly: true, sameSite: 'Strict' })
    expect(await page.evaluate<string>('document.cookie')).not.toContain('letters_session')
    await signOut()

    // The invitation is spent: its link now says so.
    await page.goto(`${baseUrl}${link.pathname}${link.hash}`)
    await alert(page)
      .getByText(/ya se usó o ha caducado/)
      .waitFor()

    expect(
      unexpected(problems, [
        failedLoad(400, '/invitations/accept'),
        // The two checks of GET /session after signing out, from the page, and the spent link.
        failedLoad(401, '/session'),
        failedLoad(404, '/invitations/lookup'),
      ]),
    ).toEqual([])
  })

  it('throttles wrong passwords: past the limit the page shows the 429 message, the right password is refused too until the window ends, then it signs in', async ({
    pipeline,
    baseUrl,
    browser,
  }) => {
    const account = await adminAccount(pipeline.app, 10)
    const { id, email } = await person(pipeline.app, account.id, 'member')
    const { context, page, problems } = await openTab(browser, baseUrl)
    const answers: number[] = []
    page.on('response', (response) => {
      if (response.request().method() === 'POST' && new URL(response.url()).pathname === '/session') answers.push(response.status())
    })
    await page.goto('/dashboard/')
    await heading(page, 'Entrar en tu cuenta').waitFor()
    const entrar = page.getByRole('button', { name: 'Entrar' })
    /** Submits and waits for the page's answer to this submit (the n-th). */
    const submit = async (password: string) => {
      const before = answers.length
      await page.getByLabel('Correo electrónico').fill(email)
      await page.getByLabel('Contraseña', { exact: true }).fill(password)
      await entrar.click()
      await until(`answer ${before + 1} to POST /session`, () => answers.length > before)
      await until('the page done waiting', () => entrar.isEnabled())
    }

    const started = Date.now()
    for (let attempt = 1; attempt <= FAILURES_MAX; attempt++) {
      await submit('no es mi contraseña de verdad')
      await alert(page).getByText('El correo electrónico o la contraseña no son correctos').waitFor()
    }
    expect(answers).toEqual([401, 401, 401])

    await submit('no es mi contraseña de verdad')
    await alert(page)
      .getByText(/^Demasiados intentos de autenticación fallidos desde esta dirección; inténtalo de nuevo en \d+ s$/)
      .waitFor()
    // The right password, inside the window: refused the same way, no session opened.
    await submit(GOOD_PASSWORD)
    await alert(page)
      .getByText(/^Demasiados intentos de autenticación fallidos/)
      .waitFor()
    expect(answers).toEqual([401, 401, 401, 429, 429])
    expect(await sessionsOf(pipeline.app.db, id)).toEqual([])
    expect((await context.cookies()).map((cookie) => cookie.name)).not.toContain('letters_session')

    // Pressing Entrar again (a second apart) until the window has ended: then it signs in.
    const inicio = heading(page, 'Inicio')
    await until(
      'the right password accepted once the window ends',
      async () => {
        if (await inicio.isVisible()) return true
        // While the SDK waits out a Retry-After the button stays disabled ("Comprobando…").
        if (await entrar.isEnabled().catch(() => false)) await entrar.click().catch(() => undefined)
        return false
      },
      { timeoutMs: FAILURES_WINDOW_MS + 60_000, everyMs: 1000 },
    )
    expect(Date.now() - started).toBeGreaterThanOrEqual(FAILURES_WINDOW_MS - 500)
    expect(answers.at(-1)).toBe(200)
    expect(answers.slice(5, -1).every((status) => status === 429)).toBe(true)
    expect(await sessionsOf(pipeline.app.db, id)).toHaveLength(1)
    expect(unexpected(problems, [failedLoad(401, '/session'), failedLoad(429, '/session')])).toEqual([])
  })

  it('sends a person whose session ran out (idle past DASHBOARD_SESSION_IDLE_MS) to the sign-in page, on reload and on the next click, without a crash', async ({
    pipeline,
    baseUrl,
    browser,
  }) => {
    const account = await adminAccount(pipeline.app, 10)
    const { id, email } = await person(pipeline.app, account.id, 'owner')
    const { page, problems, settled } = await signedInTab(browser, baseUrl, { email })
    // Only once the open page's own requests are answered: one still on its way would meet the ended session too.
    const expire = async () => {
      await settled()
      const past = new Date(Date.now() - pipeline.config.dashboard.sessionIdleMs - 60_000)
      const expired = await pipeline.app.db.update(dashboardSessions).set({ lastSeenAt: past }).where(eq(dashboardSessions.userId, id)).returning()
      expect(expired).toHaveLength(1)
    }

    await page.goto('/dashboard/cartas')
    await heading(page, 'Cartas').waitFor()
    await expire()
    await page.reload()
    await heading(page, 'Entrar en tu cuenta').waitFor()
    // The ended session is gone from the database too.
    expect(await sessionsOf(pipeline.app.db, id)).toEqual([])

    // Signed in again through the form; the session runs out while a page is open, and the next click finds out.
    await page.getByLabel('Correo electrónico').fill(email)
    await page.getByLabel('Contraseña', { exact: true }).fill(GOOD_PASSWORD)
    await page.getByRole('button', { name: 'Entrar' }).click()
    await heading(page, 'Cartas').waitFor()
    await expire()
    await nav(page).getByRole('link', { name: 'Saldo' }).click()
    await heading(page, 'Entrar en tu cuenta').waitFor()
    expect(await page.getByRole('button', { name: 'Entrar' }).isEnabled()).toBe(true)

    expect(unexpected(problems, [failedLoad(401, '/session'), failedLoad(401, '/balance'), failedLoad(401, '/balance/movements?limit=25')])).toEqual([])
  })
})

describe('a viewer', () => {
  it('sees no way to send or cancel (links, buttons, the new-letter form), and its write from the page is answered 403 with the Error object in Spanish', async ({
    pipeline,
    baseUrl,
    browser,
  }) => {
    const account = await adminAccount(pipeline.app, 50, 'Papelería Luna', { name: 'Papelería Luna' })
    await adminCampaign(pipeline.app, account)
    const client = publicClient(pipeline.app, account.apiKey)
    const send = async (overrides: Record<string, unknown> = {}) => {
      const response = await client.post('/single', singleLetter(account, overrides))
      expect(response.statusCode, response.body).toBe(200)
      return response.json<{ cardId: string }>().cardId
    }
    // One still cancellable (scheduled for tomorrow), one printed (its personal data erasable).
    const scheduled = await send({ sendAt: new Date(Date.now() + 86_400_000).toISOString() })
    const printed = await send()
    await until(
      'the letter printed',
      async () => (await pipeline.app.db.select({ status: letters.status }).from(letters).where(eq(letters.id, printed)))[0]?.status === 'printed',
      { timeoutMs: 90_000, everyMs: 100 },
    )
    const viewer = await person(pipeline.app, account.id, 'viewer')
    const { context, page, problems } = await signedInTab(browser, baseUrl, viewer)

    await page.goto('/dashboard/')
    await heading(page, 'Inicio').waitFor()
    expect(await nav(page).getByRole('link').allInnerTexts()).toEqual(['Inicio', 'Cartas', 'Campañas', 'Diseños', 'Saldo'])

    for (const id of [scheduled, printed]) {
      await page.goto(`/dashboard/cartas/${id}`)
      await heading(page, 'Carta para Lucía García').waitFor()
      await page.getByRole('heading', { name: 'Historial' }).waitFor()
      expect(await page.getByRole('button', { name: 'Cancelar carta' }).count()).toBe(0)
      expect(await page.getByRole('button', { name: 'Borrar datos personales' }).count()).toBe(0)
    }

    await page.goto('/dashboard/campanas')
    await page.getByRole('link', { name: 'Ver sus cartas' }).waitFor()
    expect(await page.getByRole('link', { name: 'Hacer un envío masivo' }).count()).toBe(0)

    for (const path of ['/dashboard/nueva', '/dashboard/masivo']) {
      await page.goto(path)
      await heading(page, 'No tienes permiso').waitFor()
      expect(await page.getByRole('button', { name: 'Enviar carta' }).count()).toBe(0)
      expect(await page.getByLabel('Mensaje').count()).toBe(0)
      expect(await page.getByLabel('Archivo CSV').count()).toBe(0)
    }

    // The API refuses it anyway: a POST /single from the page's own origin, with its CSRF token.
    const before = await pipeline.app.db.select({ id: letters.id }).from(letters).where(eq(letters.accountId, account.id))
    // The token as the page reads it: the readable cookie beside the session's.
    const csrf = await page.evaluate<string>("document.cookie.split('; ').find((cookie) => cookie.startsWith('letters_csrf=')).slice('letters_csrf='.length)")
    expect(csrf).toBe((await context.cookies()).find((cookie) => cookie.name === 'letters_csrf')?.value)
    const answer = await page.evaluate(
      async ({ letter, token }) => {
        const response = await fetch('/single', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-csrf-token': decodeURIComponent(token) },
          body: JSON.stringify(letter),
        })
        return { status: response.status, body: (await response.json()) as Record<string, unknown> }
      },
      { letter: singleLetter(account), token: csrf },
    )
    expect(answer).toEqual({
      status: 403,
      body: { error: 'Forbidden', message: 'Tu rol (lector) no permite esta acción; pídesela a un propietario de la cuenta', requestId: expect.any(String) },
    })
    expect(await pipeline.app.db.select({ id: letters.id }).from(letters).where(eq(letters.accountId, account.id))).toEqual(before)
    expect(unexpected(problems, [failedLoad(403, '/single')])).toEqual([])
  })
})

describe('the navigation', () => {
  /** The pages each link opens, by its title (the link's own words). */
  const ownerPages = ['Inicio', 'Cartas', 'Nueva carta', 'Envío masivo', 'Campañas', 'Diseños', 'Saldo', 'Desarrolladores', 'Equipo']

  it('shows an owner all nine pages, each link opening its page; a member all but Desarrolladores and Equipo, which tell a member it has no permission', async ({
    pipeline,
    baseUrl,
    browser,
  }) => {
    const account = await adminAccount(pipeline.app, 50, 'Papelería Luna', { name: 'Papelería Luna' })
    const visit = async (role: 'owner' | 'member') => {
      const { page, problems } = await signedInTab(browser, baseUrl, await person(pipeline.app, account.id, role))
      await page.goto('/dashboard/')
      await heading(page, 'Inicio').waitFor()
      const links = await nav(page).getByRole('link').allInnerTexts()
      // Each link, followed, opens its page and is marked as the current one.
      for (const name of links) {
        const link = nav(page).getByRole('link', { name, exact: true })
        await link.click()
        await heading(page, name).waitFor()
        expect(await link.getAttribute('aria-current')).toBe('page')
      }
      return { page, links, problems }
    }

    const owner = await visit('owner')
    expect(owner.links).toEqual(ownerPages)
    expect(unexpected(owner.problems)).toEqual([])

    const member = await visit('member')
    expect(member.links).toEqual(ownerPages.filter((name) => name !== 'Desarrolladores' && name !== 'Equipo'))
    for (const path of ['/dashboard/desarrolladores', '/dashboard/equipo']) {
      await member.page.goto(path)
      await heading(member.page, 'No tienes permiso').waitFor()
      expect(await member.page.getByRole('button', { name: 'Invitar' }).count()).toBe(0)
      expect(await member.page.getByRole('button', { name: 'Crear clave' }).count()).toBe(0)
    }
    expect(unexpected(member.problems)).toEqual([])
  })
})

describe('Equipo', () => {
  it('lets an owner invite with a role (the one-time link shown and working), change a member’s role (its sessions ended) and remove a person (row and user gone)', async ({
    pipeline,
    baseUrl,
    browser,
  }) => {
    const app = pipeline.app
    const account = await adminAccount(app, 10, 'Papelería Luna', { name: 'Papelería Luna' })
    const usersOf = async () =>
      (await app.db.select({ email: dashboardUsers.email, role: dashboardUsers.role }).from(dashboardUsers).where(eq(dashboardUsers.accountId, account.id)))
        .map(({ email, role }) => `${email} ${role}`)
        .sort()
    const owner = await person(app, account.id, 'owner')
    const member = await person(app, account.id, 'member')
    // The member signed in elsewhere: a change of role ends that session.
    const membersBrowser = new DashboardBrowser(app)
    await membersBrowser.signIn(member.email)
    expect((await membersBrowser.get('/session')).statusCode).toBe(200)

    const { page, problems } = await signedInTab(browser, baseUrl, owner)
    await page.goto('/dashboard/equipo')
    await heading(page, 'Equipo').waitFor()
    const team = page.getByRole('region', { name: 'Personas del equipo' })
    const rowOf = (email: string) => team.getByRole('row').filter({ hasText: email })
    await rowOf(member.email).waitFor()
    expect(await team.locator('tbody tr').count()).toBe(2)

    // Invited as a viewer: the link shown once, in the page; it names the person, and the row is pending.
    const invited = `lectura-${crypto.randomUUID().slice(0, 8)}@gestoria-sur.es`
    await page.getByLabel('Correo electrónico', { exact: true }).fill(invited)
    await page.getByLabel('Rol', { exact: true }).selectOption({ label: 'Lector' })
    await page.getByRole('button', { name: 'Invitar', exact: true }).click()
    await page.getByRole('status').getByText(`Invitación creada para ${invited}.`).waitFor()
    const link = await page.getByLabel('Enlace de la invitación', { exact: true }).inputValue()
    expect(new URL(link)).toMatchObject({ origin: DASHBOARD_ORIGIN, pathname: '/dashboard/invitacion', hash: expect.stringMatching(/^#[A-Za-z0-9_-]{20,}$/) })
    await rowOf(invited).getByText('Invitación pendiente').waitFor()
    expect(await usersOf()).toEqual([`${invited} viewer`, `${member.email} member`, `${owner.email} owner`].sort())
    const lookup = await new DashboardBrowser(app).lookUp(invitationToken({ invitationUrl: link }))
    expect(lookup.statusCode, lookup.body).toBe(200)
    expect(lookup.json()).toMatchObject({ email: invited, accountName: 'Papelería Luna', role: 'viewer' })

    // The member made a viewer, after saying yes: the role stored, the member's session ended.
    await page.getByLabel(`Rol de ${member.email}`, { exact: true }).selectOption({ label: 'Lector' })
    await page.getByRole('button', { name: `Cambiar rol de ${member.email}` }).click()
    const changing = page.getByRole('dialog', { name: '¿Cambiar el rol?' })
    await changing.getByText(`${member.email} pasará de Miembro a Lector (solo consultar).`).waitFor()
    await changing.getByRole('button', { name: 'Sí, cambiar el rol' }).click()
    await changing.waitFor({ state: 'hidden' })
    await page.getByRole('button', { name: `Cambiar rol de ${member.email}` }).waitFor({ state: 'detached' })
    expect(await page.getByLabel(`Rol de ${member.email}`, { exact: true }).locator('option:checked').innerText()).toBe('Lector')
    expect(await usersOf()).toEqual([`${invited} viewer`, `${member.email} viewer`, `${owner.email} owner`].sort())
    expect((await membersBrowser.get('/session')).statusCode).toBe(401)

    // Removed, after saying yes: the row gone from the page, the user from the database, and the password no longer lets them in.
    await rowOf(member.email)
      .getByRole('button', { name: `Quitar a ${member.email}` })
      .click()
    const removing = page.getByRole('dialog', { name: '¿Quitar a esta persona?' })
    await removing.getByText(`${member.email} ya no podrá entrar en el panel de esta cuenta.`).waitFor()
    await removing.getByRole('button', { name: 'Sí, quitar' }).click()
    await removing.waitFor({ state: 'hidden' })
    await rowOf(member.email).waitFor({ state: 'detached' })
    expect(await team.locator('tbody tr').count()).toBe(2)
    expect(await usersOf()).toEqual([`${invited} viewer`, `${owner.email} owner`].sort())
    // From an address of its own: this file's throttle allows three failures per address.
    const elsewhere = new DashboardBrowser(app, DASHBOARD_ORIGIN, '192.0.2.10')
    expect((await elsewhere.post('/session', { email: member.email, password: GOOD_PASSWORD })).statusCode).toBe(401)
    expect(unexpected(problems)).toEqual([])
  })
})

describe('another site', () => {
  it('cannot make a signed-in browser create a key or a letter: cross-site the cookie is not sent (401), cross-origin on the same site the Origin check answers 403', async ({
    pipeline,
    baseUrl,
    browser,
  }) => {
    const account = await adminAccount(pipeline.app, 50)
    const { context, page } = await signedInTab(browser, baseUrl, await person(pipeline.app, account.id, 'owner'))
    await page.goto('/dashboard/')
    await heading(page, 'Inicio').waitFor()

    // The other site's page: a form that posts JSON-looking text/plain to /api-keys, and a script
    // that tries /single with fetch, credentials included (JSON: preflighted; text/plain: not).
    const letter = JSON.stringify(singleLetter(account))
    const evil = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(`<!doctype html><html lang="en"><title>Win a prize</title>
<form id="keys" method="POST" action="${baseUrl}/api-keys" enctype="text/plain"><input name='{"mode":"live","x":"' value='"}'></form>
<script>
  window.tryJson = () => fetch('${baseUrl}/single', { method: 'POST', credentials: 'include', headers: { 'content-type': 'application/json' }, body: ${JSON.stringify(letter)} })
    .then((response) => 'answered ' + response.status, (error) => 'failed: ' + error.name)
  window.trySimple = () => fetch('${baseUrl}/single', { method: 'POST', mode: 'no-cors', credentials: 'include', headers: { 'content-type': 'text/plain' }, body: ${JSON.stringify(letter)} })
    .then((response) => 'opaque ' + response.type, (error) => 'failed: ' + error.name)
</script></html>`)
    })
    evil.listen(0, '127.0.0.1')
    await once(evil, 'listening')
    onTestFinished(async () => {
      evil.closeAllConnections()
      evil.close()
      await once(evil, 'close')
    })
    const evilPort = (evil.address() as { port: number }).port
    const keysBefore = await pipeline.app.db.select({ id: apiKeys.id }).from(apiKeys).where(eq(apiKeys.accountId, account.id))

    /** The other site's page at `origin`: the gateway's requests it made (cookie or not) and what came of them. */
    const attack = async (origin: string) => {
      const attacker = await context.newPage()
      const seen: Array<{ method: string; path: string; outcome: string; cookie?: boolean }> = []
      // A failed request's headers are the ones Chromium planned (no cookies yet): only an answered one's say what was sent.
      const record = async (request: Request, failure?: string) => {
        if (!request.url().startsWith(baseUrl)) return
        const sent = { method: request.method(), path: new URL(request.url()).pathname }
        if (failure !== undefined) seen.push({ ...sent, outcome: failure })
        else
          seen.push({
            ...sent,
            outcome: String((await request.response())?.status()),
            cookie: /letters_session=/.test((await request.allHeaders()).cookie ?? ''),
          })
      }
      const recorded: Promise<void>[] = []
      attacker.on('requestfinished', (request) => void recorded.push(record(request)))
      attacker.on('requestfailed', (request) => void recorded.push(record(request, request.failure()?.errorText ?? 'failed')))
      await attacker.goto(`${origin}/`)
      const json = await attacker.evaluate<string>('window.tryJson()')
      const simple = await attacker.evaluate<string>('window.trySimple()')
      const formAnswer = attacker.waitForResponse((response) => response.url() === `${baseUrl}/api-keys`)
      await attacker.locator('#keys').evaluate((form) => form.submit())
      const form = await formAnswer
      const formBody = (await form.json()) as { message: string }
      await until('the attacker’s three requests recorded', () => recorded.length >= 3)
      await Promise.all(recorded)
      await attacker.close()
      return { json, simple, form: { status: form.status(), message: formBody.message }, seen }
    }

    // Another site (localhost is not 127.0.0.1): SameSite=Strict keeps the session cookie home.
    // The JSON fetch stops at its preflight (the gateway allows no other origin); the simple one
    // is sent, without the cookie, and its answer is withheld from the script (Cross-Origin-Resource-Policy).
    const crossSite = await attack(`http://localhost:${evilPort}`)
    expect(crossSite.json).toBe('failed: TypeError')
    expect(crossSite.simple).toBe('failed: TypeError')
    expect(crossSite.form).toEqual({ status: 401, message: 'La API key no es válida o no se ha enviado en la cabecera X-API-KEY' })
    expect(crossSite.seen).toEqual([
      { method: 'POST', path: '/single', outcome: 'net::ERR_FAILED' },
      { method: 'POST', path: '/single', outcome: 'net::ERR_BLOCKED_BY_RESPONSE.NotSameOrigin' },
      { method: 'POST', path: '/api-keys', cookie: false, outcome: '401' },
    ])

    // The same site on another port (another origin): the cookie goes along, the Origin check refuses.
    const crossOrigin = await attack(`http://127.0.0.1:${evilPort}`)
    expect(crossOrigin.json).toBe('failed: TypeError')
    expect(crossOrigin.simple).toBe('failed: TypeError')
    expect(crossOrigin.form).toEqual({ status: 403, message: 'La petición viene de otro sitio web y se ha rechazado' })
    expect(crossOrigin.seen).toEqual([
      { method: 'POST', path: '/single', outcome: 'net::ERR_FAILED' },
      { method: 'POST', path: '/single', outcome: 'net::ERR_BLOCKED_BY_RESPONSE.NotSameOrigin' },
      { method: 'POST', path: '/api-keys', cookie: true, outcome: '403' },
    ])

    // Nothing was created, and the victim is still signed in.
    expect(await pipeline.app.db.select({ id: letters.id }).from(letters).where(eq(letters.accountId, account.id))).toEqual([])
    expect(await pipeline.app.db.select({ id: apiKeys.id }).from(apiKeys).where(eq(apiKeys.accountId, account.id))).toEqual(keysBefore)
    expect(await page.evaluate(async () => (await fetch('/session')).status)).toBe(200)
    expect(
      await pipeline.app.db
        .select()
        .from(dashboardUsers)
        .where(and(eq(dashboardUsers.accountId, account.id))),
    ).toHaveLength(1)
  })
})
