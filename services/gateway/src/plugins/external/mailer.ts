import fp from 'fastify-plugin'
import { createTransport, type Transporter } from 'nodemailer'
import type { Config } from '@letters/config'

declare module 'fastify' {
  interface FastifyInstance {
    mailer: Mailer
  }
}

/**
 * Sends the gateway's emails (the dashboard's invitations) through the SMTP server SMTP_URL names, with nodemailer (TLS,
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

  /** Sends a plain-text email; false when no mail server is set. A server that refuses it throws. */
  async send(message: { to: string; subject: string; text: string }): Promise<boolean> {
    if (!this.transport || !this.smtp) return false
    await this.transport.sendMail({
      from: this.smtp.from,
      // As an address object: nodemailer does not parse it as a list or a group.
      to: { name: '', address: message.to },
      subject: message.subject,
      text: message.text,
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
