import type { Command } from 'commander'
import type { admin } from '@letters/contracts'
import { segment } from '../admin-api.js'
import { listTable, recordTable } from '../output.js'
import { apiCommand, integer, nextPage, pageQuery, withPagingOptions, type GroupContext, type PagingOptions } from './shared.js'

/** The commands of `accounts`. */
export function addCommands(accounts: Command, context: GroupContext): void {
  apiCommand(
    context,
    accounts
      .command('create')
      .description('open an account, with its first live API key (shown only once)')
      .requiredOption('--name <name>', "the client's name")
      .option('--credits <credits>', 'opening credits', integer('--credits')),
    (api, options: { name: string; credits?: number; json?: boolean }) =>
      api.post<admin.CreatedAccount>('/admin/accounts', { name: options.name, ...(options.credits === undefined ? {} : { credits: options.credits }) }),
    (account) =>
      `${recordTable([
        ['id', account.id],
        ['name', account.name],
        ['balance', account.balance],
        ['apiKey', account.apiKey],
      ])}\nGuarda la API key ahora: no se vuelve a mostrar.`,
  ).addHelpText('after', '\nExample:\n  npm run admin -- accounts create --name "Papelería Luna" --credits 300')
  apiCommand(
    context,
    accounts.command('show').description('an account and its balance').argument('<account>', 'account id'),
    (api, id: string) => api.get<admin.Account>(`/admin/accounts/${segment(id)}`),
    (account) =>
      recordTable([
        ['id', account.id],
        ['name', account.name],
        ['balance', account.balance],
      ]),
  )
  apiCommand(
    context,
    accounts
      .command('erase-personal-data')
      .description(
        'erase the recipients, messages and files of every letter of an account that is printed, mailed, cancelled, rejected or failed (both modes); letters not printed yet are left. The letters keep their status, history and cost. Safe to repeat',
      )
      .argument('<account>', 'account id'),
    (api, id: string) => api.request<admin.PersonalDataErased>('DELETE', `/admin/accounts/${segment(id)}/personal-data`),
    (result) =>
      [
        recordTable([
          ['erased', result.erased],
          ['left', result.left],
          ['remaining', result.remaining],
        ]),
        ...(result.left === 1 ? ['Queda 1 carta sin imprimir: no se ha tocado; cancélala o repite la orden cuando esté impresa.'] : []),
        ...(result.left > 1 ? [`Quedan ${result.left} cartas sin imprimir: no se han tocado; cancélalas o repite la orden cuando estén impresas.`] : []),
        ...(result.remaining > 0 ? [`Quedan ${result.remaining} por borrar que no dio tiempo a tratar: repite la orden.`] : []),
      ].join('\n'),
  ).addHelpText('after', '\nExample:\n  npm run admin -- accounts erase-personal-data <account>')
  apiCommand(
    context,
    withPagingOptions(accounts.command('list').description('every account with its balance, newest first, a page at a time'), 'accounts'),
    (api, options: PagingOptions & { json?: boolean }) => api.get<admin.AccountList>(`/admin/accounts${pageQuery(options)}`),
    (page) =>
      page.data.length === 0
        ? 'No hay cuentas.'
        : listTable(
            ['id', 'name', 'balance', 'createdAt'],
            page.data.map((account) => [account.id, account.name, account.balance, account.createdAt]),
          ) + nextPage(page.nextCursor),
  )
}
