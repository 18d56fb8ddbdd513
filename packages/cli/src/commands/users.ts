import type { Command } from 'commander'
import type { dashboard } from '@letters/contracts'
import { segment } from '../admin-api.js'
import { recordTable } from '../output.js'
import { apiCommand, type GroupContext } from './shared.js'

/** The commands of `users`. */
export function addCommands(users: Command, context: GroupContext): void {
  apiCommand(
    context,
    users
      .command('invite')
      .description('invite a person to an account: a one-time link to the dashboard, valid for 72 hours (also emailed when SMTP_URL is set)')
      .argument('<account>', 'account id')
      .requiredOption('--email <email>', 'their email address')
      .option('--role <role>', 'owner, member or viewer', 'owner'),
    (api, account: string, options: { email: string; role: string; json?: boolean }) =>
      api.post<dashboard.Invitation>(`/admin/accounts/${segment(account)}/users`, { email: options.email, role: options.role }),
    (invitation) =>
      `${recordTable([
        ['id', invitation.id],
        ['email', invitation.email],
        ['role', invitation.role],
        ['invitationUrl', invitation.invitationUrl],
        ['emailed', invitation.emailed],
      ])}\n${invitation.emailed ? 'Se ha enviado por correo.' : 'Pásale el enlace: sirve una vez y caduca en 72 horas.'}`,
  ).addHelpText('after', '\nExample:\n  npm run admin -- users invite <account> --email ana@example.com --role owner')
}
