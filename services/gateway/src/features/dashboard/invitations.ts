import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import { eq } from 'drizzle-orm'
import { dashboardRoleNames, type DashboardRole } from '@letters/contracts'
import { accounts } from '@letters/db'
import { inviteUser } from './users.js'

/** The invitation's email, in Spanish: whose dashboard, which role, the link and how long it lasts. */
function invitationEmail(to: string, invitation: { accountName: string; role: DashboardRole; url: string }) {
  return {
    to,
    subject: `Invitación al panel de cartas de ${invitation.accountName}`,
    text: [
      'Hola:',
      '',
      `Te han invitado al panel de cartas manuscritas de ${invitation.accountName}, con el rol de ${dashboardRoleNames[invitation.role]}.`,
      'Para crear tu acceso, abre este enlace y elige una contraseña:',
      '',
      invitation.url,
      '',
      'El enlace sirve una sola vez y caduca en 72 horas. Si no esperabas esta invitación, ignora este correo.',
    ].join('\n'),
  }
}

/**
 * Invites a person to an account (the admin API, the CLI and an owner in the dashboard all come
 * here) and, with a mail server set, emails them the link. A mail server that fails does not undo
 * the invitation: the link is in the answer, to pass on by hand, and `emailed` says it was not sent.
 */
export async function inviteAndSend(app: FastifyInstance, accountId: string, body: { email: string; role: DashboardRole }, log: FastifyBaseLogger) {
  const invitation = await inviteUser(app.db, accountId, body, app.config.publicBaseUrl)
  let emailed = false
  if (app.mailer.enabled) {
    const [account] = await app.db.select({ name: accounts.name }).from(accounts).where(eq(accounts.id, accountId))
    try {
      emailed = await app.mailer.send(
        invitationEmail(invitation.email, { accountName: account?.name ?? '', role: invitation.role, url: invitation.invitationUrl }),
      )
    } catch (error) {
      // The error's text may name the recipient: only its code goes to the log.
      const code = (error as { code?: unknown; responseCode?: unknown }).responseCode ?? (error as { code?: unknown }).code
      log.warn({ code, userId: invitation.id }, 'the invitation could not be emailed; its link is in the answer')
    }
  }
  return { ...invitation, emailed }
}
