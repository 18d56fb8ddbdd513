import fp from 'fastify-plugin'
import { createTransport, type Transporter } from 'nodemailer'
import type { Config } from '@letters/config'
import { dashboardRoleNames, type DashboardRole } from '@letters/contracts'

declare module 'fastify' {
  interface FastifyInstance {
    mailer: Mailer
  }
}

/**
 * Sends the dashboard's emails through the SMTP server SMTP_URL names, with nodemailer (TLS,
 * authentication and the message's encoding are its job). Without SMTP_URL nothing is sent:
 * whoever invites gets the link to pass on.
 */
export class Mailer {
  private readonly transport: Transporter | undefined

  constructor(private readonly smtp: Config['smtp']) {
    // A mail server that does not answer must not hold an invitation's request for minutes.
    this.transport = smtp && createTransport({ url: smtp.url, connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 20_000 })
  }

  get enabled(): boolean {
    return this.transport !== undefined
  }

  /** Sends an invitation; false when no mail server is set. A server that refuses it throws. */
  async sendInvitation(to: string, invitation: { accountName: string; role: DashboardRole; url: string }): Promise<boolean> {
    if (!this.transport || !this.smtp) return false
    const role = dashboardRoleNames[invitation.role]
    await this.transport.sendMail({
      from: this.smtp.from,
      // As an address object: nodemailer does not parse it as a list or a group.
      to: { name: '', address: to },
      subject: `Invitación al panel de cartas de ${invitation.accountName}`,
      text: [
        'Hola:',
        '',
        `Te han invitado al panel de cartas manuscritas de ${invitation.accountName}, con el rol de ${role}.`,
        'Para crear tu acceso, abre este enlace y elige una contraseña:',
        '',
        invitation.url,
        '',
        'El enlace sirve una sola vez y caduca en 72 horas. Si no esperabas esta invitación, ignora este correo.',
      ].join('\n'),
    })
    return true
  }

  close(): void {
    this.transport?.close()
  }
}

/** The mailer, closed with the gateway. */
export default fp(
  async (app) => {
    const mailer = new Mailer(app.config.smtp)
    app.decorate('mailer', mailer)
    app.addHook('onClose', async () => mailer.close())
  },
  { name: 'mailer', dependencies: ['config'] },
)
