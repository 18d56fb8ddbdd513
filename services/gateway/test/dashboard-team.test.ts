import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import { describe, expect } from 'vitest'
import { eq } from 'drizzle-orm'
import { SMTPServer } from 'smtp-server'
import { dashboardUsers } from '@letters/db'
import { DashboardBrowser, GOOD_PASSWORD, invitationToken, inviteThroughAdmin, signedInUser } from '@letters/test/support/dashboard'
import { it } from '@letters/test/support/fixtures'
import { openGateway } from '@letters/test/support/gateway'
import { adminAccount } from '@letters/test/support/accounts'
import { expectError } from './helpers.js'

/** A message's text as written: quoted-printable's soft line breaks joined and its escapes decoded, as a mail reader shows it. */
const quotedPrintable = (raw: string) =>
  Buffer.from(
    raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_match, hex: string) => String.fromCharCode(parseInt(hex, 16))),
    'latin1',
  ).toString('utf8')

const newEmail = (what: string) => `${what}-${crypto.randomUUID()}@example.com`

describe('the team, for an owner signed in', () => {
  it('lists the people with their roles, invites from the dashboard, changes a role and removes someone', async ({ gateway, account }) => {
    const owner = await signedInUser(gateway, account.id, 'owner')
    const email = newEmail('eva')
    const invited = await owner.browser.post('/users', { email, role: 'viewer' })
    expect(invited.statusCode, invited.body).toBe(201)
    const invitation = invited.json<{ id: string; invitationUrl: string }>()
    expect(invitation).toEqual({
      id: expect.any(String),
      email,
      role: 'viewer',
      invitationUrl: expect.stringMatching(/\/dashboard\/invitacion#/),
      emailed: false,
    })

    const list = (await owner.browser.get('/users')).json<{ data: Array<{ id: string; email: string; role: string; status: string }> }>()
    expect(list.data.map(({ email, role, status }) => ({ email, role, status }))).toEqual([
      { email: owner.email, role: 'owner', status: 'active' },
      { email, role: 'viewer', status: 'invited' },
    ])

    await new DashboardBrowser(gateway).accept(invitation)
    const changed = await owner.browser.patch(`/users/${invitation.id}`, { role: 'member' })
    expect(changed.json()).toMatchObject({ id: invitation.id, role: 'member', status: 'active' })
    expect((await owner.browser.delete(`/users/${invitation.id}`)).statusCode).toBe(204)
    expect((await owner.browser.get('/users')).json<{ data: unknown[] }>().data).toHaveLength(1)
    expectError(await owner.browser.delete(`/users/${invitation.id}`), 404, 'Not Found', 'El usuario no existe en esta cuenta')
  })

  it("never reaches another account's people", async ({ gateway, account }) => {
    const owner = await signedInUser(gateway, account.id, 'owner')
    const other = await adminAccount(gateway, 0)
    const stranger = await signedInUser(gateway, other.id, 'member')
    expectError(await owner.browser.patch(`/users/${stranger.user.id}`, { role: 'owner' }), 404, 'Not Found')
    expectError(await owner.browser.delete(`/users/${stranger.user.id}`), 404, 'Not Found')
    expect((await owner.browser.get('/users')).json<{ data: Array<{ email: string }> }>().data.map((user) => user.email)).not.toContain(stranger.email)
    expect((await stranger.browser.get('/cards')).statusCode).toBe(200)
  })

  it('keeps at least one owner who can sign in', async ({ gateway, account }) => {
    const owner = await signedInUser(gateway, account.id, 'owner')
    expectError(await owner.browser.patch(`/users/${owner.user.id}`, { role: 'member' }), 409, 'Conflict', /al menos un propietario con acceso/)
    expectError(await owner.browser.delete(`/users/${owner.user.id}`), 409, 'Conflict')
    // An owner who has not followed the invitation does not count.
    const pending = await owner.browser.post('/users', { email: newEmail('pendiente'), role: 'owner' })
    expect(pending.statusCode).toBe(201)
    expectError(await owner.browser.patch(`/users/${owner.user.id}`, { role: 'member' }), 409, 'Conflict')
    expect((await gateway.db.select().from(dashboardUsers).where(eq(dashboardUsers.id, owner.user.id)))[0]!.role).toBe('owner')
  })

  it('leaves an owner when two owners demote each other at the same moment', async ({ gateway, account }) => {
    for (let round = 0; round < 5; round++) {
      const accountOf = await adminAccount(gateway, 0)
      const a = await signedInUser(gateway, accountOf.id, 'owner')
      const b = await signedInUser(gateway, accountOf.id, 'owner')
      const [first, second] = await Promise.all([
        a.browser.patch(`/users/${b.user.id}`, { role: 'viewer' }),
        b.browser.patch(`/users/${a.user.id}`, { role: 'viewer' }),
      ])
      // One wins; the other either finds its own session ended (401) or the last owner kept (409).
      expect([first.statusCode, second.statusCode].filter((status) => status === 200)).toHaveLength(1)
      expect([first.statusCode, second.statusCode].every((status) => [200, 401, 409].includes(status))).toBe(true)
      const owners = await gateway.db.select().from(dashboardUsers).where(eq(dashboardUsers.accountId, accountOf.id))
      expect(owners.filter((user) => user.role === 'owner')).toHaveLength(1)
    }
    expect(account.id).toBeDefined()
  })
})

describe('what the team and key routes refuse', () => {
  it('answers a bad role, an id that is none or an extra field with 400, and changes nothing', async ({ gateway, account }) => {
    const owner = await signedInUser(gateway, account.id, 'owner')
    const member = await signedInUser(gateway, account.id, 'member')
    const team = async () => (await owner.browser.get('/users')).json()
    const keys = async () => (await owner.browser.get('/api-keys')).json()
    const [teamBefore, keysBefore] = [await team(), await keys()]
    expectError(
      await owner.browser.patch(`/users/${member.user.id}`, { role: 'jefe' }),
      400,
      'Bad Request',
      "El campo 'role' debe ser 'owner', 'member' o 'viewer'",
    )
    expectError(
      await owner.browser.patch(`/users/${member.user.id}`, { role: 'viewer', email: 'otra@example.com' }),
      400,
      'Bad Request',
      "El campo 'email' no está permitido",
    )
    expectError(await owner.browser.patch('/users/no-es-un-id', { role: 'viewer' }), 400, 'Bad Request')
    expectError(await owner.browser.delete('/users/no-es-un-id'), 400, 'Bad Request')
    expectError(await owner.browser.post('/users', { email: 'no es un correo', role: 'member' }), 400, 'Bad Request', /dirección de correo electrónico/)
    expectError(await owner.browser.post('/users', { email: 'a@b.c,spy@evil.example', role: 'member' }), 400, 'Bad Request')
    expectError(await owner.browser.delete('/api-keys/no-es-un-id'), 400, 'Bad Request')
    expectError(await owner.browser.post('/api-keys', { mode: 'live', name: 'tienda' }), 400, 'Bad Request', "El campo 'name' no está permitido")
    expect([await team(), await keys()]).toEqual([teamBefore, keysBefore])
    // The member's session was not ended by any of them.
    expect((await member.browser.get('/cards')).statusCode).toBe(200)
  })

  it('answers an invitation token that cannot be one, or a body with more than the token and password, with 400', async ({ gateway }) => {
    const browser = new DashboardBrowser(gateway)
    expectError(await browser.post('/invitations/lookup', { token: 'x'.repeat(65) }), 400, 'Bad Request')
    expectError(await browser.post('/invitations/lookup', {}), 400, 'Bad Request', "El campo 'token' es obligatorio")
    expectError(
      await browser.post('/invitations/accept', { token: 'A'.repeat(43), password: GOOD_PASSWORD, role: 'owner' }),
      400,
      'Bad Request',
      "El campo 'role' no está permitido",
    )
    expect(browser.cookies.size).toBe(0)
  })
})

describe('API keys, for an owner signed in', () => {
  it('creates a key shown once, lists it by its first 12 characters, and revokes it at once', async ({ gateway, account }) => {
    const owner = await signedInUser(gateway, account.id, 'owner')
    const created = await owner.browser.post('/api-keys', { mode: 'live' })
    expect(created.statusCode, created.body).toBe(201)
    const key = created.json<{ id: string; apiKey: string; prefix: string; mode: string; createdAt: string }>()
    expect(key).toEqual({
      id: expect.any(String),
      apiKey: expect.stringMatching(/^lk_live_/),
      prefix: key.apiKey.slice(0, 12),
      mode: 'live',
      createdAt: expect.any(String),
    })

    const listed = (await owner.browser.get('/api-keys')).json<{ data: Array<Record<string, unknown>> }>().data
    expect(listed).toContainEqual({ id: key.id, prefix: key.apiKey.slice(0, 12), mode: 'live', createdAt: key.createdAt })
    expect(JSON.stringify(listed)).not.toContain(key.apiKey)
    // The account's first key, made with the account, is listed too.
    expect(listed.map((row) => row.prefix)).toContain(account.apiKey.slice(0, 12))

    const use = () => gateway.inject({ method: 'GET', url: '/campaigns', headers: { 'x-api-key': key.apiKey } })
    expect((await use()).statusCode).toBe(200)
    expect((await owner.browser.delete(`/api-keys/${key.id}`)).statusCode).toBe(204)
    expectError(await use(), 401, 'Unauthorized')
    expect((await owner.browser.get('/api-keys')).json<{ data: Array<{ id: string }> }>().data.map((row) => row.id)).not.toContain(key.id)
  })

  it("answers 404 to revoking another account's key, and leaves it working", async ({ gateway, account }) => {
    const owner = await signedInUser(gateway, account.id, 'owner')
    const other = await adminAccount(gateway, 0)
    const [otherKey] = (await gateway.db.query.apiKeys.findMany({ where: (keys, { eq }) => eq(keys.accountId, other.id) })) as Array<{ id: string }>
    expectError(await owner.browser.delete(`/api-keys/${otherKey!.id}`), 404, 'Not Found', 'La API key no existe')
    expect((await gateway.inject({ method: 'GET', url: '/campaigns', headers: { 'x-api-key': other.apiKey } })).statusCode).toBe(200)
  })

  it.for([
    [{}, "El campo 'mode' es obligatorio"],
    [{ mode: 'prod' }, "El campo 'mode' debe ser 'live' o 'test'"],
  ] as const)('refuses %j with 400', async ([body, message], { gateway, account }) => {
    const owner = await signedInUser(gateway, account.id, 'owner')
    expectError(await owner.browser.post('/api-keys', body), 400, 'Bad Request', message)
  })
})

describe('invitations by email', () => {
  it('are sent through the SMTP server SMTP_URL names, with the link; a server that refuses leaves the link in the answer', async () => {
    const received: Array<{ from: string; to: string[]; data: string }> = []
    let refuse = false
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      onRcptTo(address, _session, callback) {
        callback(refuse ? Object.assign(new Error('mailbox unavailable'), { responseCode: 550 }) : undefined)
      },
      onData(stream, session, callback) {
        const chunks: Buffer[] = []
        stream.on('data', (chunk: Buffer) => chunks.push(chunk))
        stream.on('end', () => {
          received.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((rcpt) => rcpt.address),
            data: Buffer.concat(chunks).toString('utf8'),
          })
          callback()
        })
      },
    })
    server.listen(0, '127.0.0.1')
    await once(server.server, 'listening')
    const port = (server.server.address() as AddressInfo).port
    const { app, close } = await openGateway({ env: { SMTP_URL: `smtp://127.0.0.1:${port}`, PUBLIC_BASE_URL: 'https://cartas.example.com' } })
    try {
      const account = await adminAccount(app, 0)
      // The gateway's public origin is the one its pages come from.
      const owner = { browser: new DashboardBrowser(app, 'https://cartas.example.com') }
      await owner.browser.accept(await inviteThroughAdmin(app, account.id, newEmail('propietaria')))
      const email = newEmail('correo')
      const invited = await owner.browser.post('/users', { email, role: 'member' })
      expect(invited.statusCode, invited.body).toBe(201)
      const invitation = invited.json<{ invitationUrl: string; emailed: boolean }>()
      expect(invitation.emailed).toBe(true)
      expect(invitation.invitationUrl).toMatch(/^https:\/\/cartas\.example\.com\/dashboard\/invitacion#/)
      const mail = received.find((message) => message.to.includes(email))!
      expect(mail.from).toBe('no-reply@cartas.example.com')
      expect(quotedPrintable(mail.data)).toContain(invitation.invitationUrl)
      expect(quotedPrintable(mail.data)).toContain('Te han invitado al panel de cartas manuscritas de Cliente de prueba, con el rol de miembro.')
      expect(mail.data).toMatch(/Subject: =\?UTF-8\?Q\?Invitaci=C3=B3n_al_panel|Subject: Invitaci/)
      // The link in the mail signs the person in, once.
      await new DashboardBrowser(app, 'https://cartas.example.com').accept({ invitationUrl: invitation.invitationUrl }, GOOD_PASSWORD)

      refuse = true
      const failed = await owner.browser.post('/users', { email: newEmail('rebota'), role: 'viewer' })
      expect(failed.statusCode, failed.body).toBe(201)
      expect(failed.json()).toMatchObject({ emailed: false, invitationUrl: expect.stringMatching(/#[A-Za-z0-9_-]{43}$/) })
      expect(invitationToken(failed.json())).toHaveLength(43)
    } finally {
      await close()
      server.close()
    }
  })
})
