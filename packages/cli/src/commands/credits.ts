import type { Command } from 'commander'
import type { admin } from '@letters/contracts'
import { segment } from '../admin-api.js'
import { recordTable } from '../output.js'
import { apiCommand, integer, type GroupContext } from './shared.js'

/** The commands of `credits`. */
export function addCommands(credits: Command, context: GroupContext): void {
  apiCommand(
    context,
    credits
      .command('add')
      .description('add credits to an account, or take them away with a negative amount (an adjustment)')
      .argument('<account>', 'account id')
      .argument('<amount>', 'credits, an integer other than 0; negative for an adjustment, e.g. -5', integer('El importe'))
      .option('--reason <reason>', 'why, for the ledger'),
    (api, account: string, amount: number, options: { reason?: string; json?: boolean }) =>
      api.post<admin.Balance>(`/admin/accounts/${segment(account)}/credits`, {
        amount,
        ...(options.reason === undefined ? {} : { reason: options.reason }),
      }),
    (balance) => recordTable([['balance', balance.balance]]),
  ).addHelpText(
    'after',
    '\nExamples:\n  npm run admin -- credits add <account> 500 --reason "pedido 881"\n  npm run admin -- credits add <account> -5 --reason "corrección"',
  )
}
