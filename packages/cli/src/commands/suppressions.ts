import { type Command, Option } from 'commander'
import type { Mode, Suppression } from '@letters/contracts'
import { segment } from '../admin-api.js'
import { listTable } from '../output.js'
import { apiCommand, nextPage, pageQuery, reasonWithLabel, withPagingOptions, type GroupContext, type PagingOptions } from './shared.js'

/** The commands of `suppressions`. */
export function addCommands(suppressions: Command, context: GroupContext): void {
  const modeOption = () => new Option('--mode <mode>', 'the live list (default) or the test one').choices(['live', 'test'])
  apiCommand(
    context,
    withPagingOptions(
      suppressions
        .command('list')
        .description("an account's suppression list, newest first, a page at a time: postal code and country (the street is kept only as a hash)")
        .argument('<account>', 'account id')
        .addOption(modeOption()),
      'entries',
    ),
    (api, account: string, options: PagingOptions & { mode?: Mode; json?: boolean }) =>
      api.get<{ data: Suppression[]; nextCursor: string | null }>(`/admin/accounts/${segment(account)}/suppressions${pageQuery(options)}`),
    (page) =>
      page.data.length === 0
        ? 'La lista de supresión está vacía.'
        : listTable(
            ['id', 'zip', 'country', 'createdAt', 'reason'],
            page.data.map((entry) => [entry.id, entry.zip, entry.country, entry.createdAt, reasonWithLabel(entry.reason)]),
          ) + nextPage(page.nextCursor),
  ).addHelpText('after', '\nExamples:\n  npm run admin -- suppressions list <account>\n  npm run admin -- suppressions list <account> --mode test --limit 50')
  apiCommand(
    context,
    suppressions
      .command('lift')
      .description("lift an entry of an account's suppression list: letters to that address are sent again (the API answers no body: --json prints nothing)")
      .argument('<account>', 'account id')
      .argument('<suppression>', 'the entry id, as suppressions list shows it')
      .addOption(modeOption()),
    (api, account: string, suppression: string, options: { mode?: Mode }) =>
      api.delete(`/admin/accounts/${segment(account)}/suppressions/${segment(suppression)}${pageQuery({ mode: options.mode })}`),
    () => 'Entrada quitada de la lista de supresión: las cartas a esa dirección vuelven a enviarse.',
  ).addHelpText('after', '\nExample:\n  npm run admin -- suppressions lift <account> <suppression> --mode test')
}
