import type { Command } from 'commander'
import type { admin } from '@letters/contracts'
import { CliError, segment } from '../admin-api.js'
import { listTable, recordTable } from '../output.js'
import { apiCommand, type GroupContext } from './shared.js'

/** The commands of `keys`. */
export function addCommands(keys: Command, context: GroupContext): void {
  apiCommand(
    context,
    keys
      .command('issue')
      .description('issue another API key for an account (shown only once)')
      .argument('<account>', 'account id')
      .option('--test', 'a test key (lk_test_): its letters are never charged nor printed'),
    (api, account: string, options: { test?: boolean; json?: boolean }) =>
      api.post<admin.CreatedApiKey>(`/admin/accounts/${segment(account)}/api-keys`, { mode: options.test ? 'test' : 'live' }),
    (key) =>
      `${recordTable([
        ['id', key.id],
        ['mode', key.mode],
        ['apiKey', key.apiKey],
      ])}\nGuarda la API key ahora: no se vuelve a mostrar.`,
  )
  /** What a key, or its visible start, is searched by: its first 14 characters, never the whole key (a URL is logged). */
  const visibleStart = (key: string) => key.slice(0, 14)
  apiCommand(
    context,
    keys
      .command('find')
      .description('the keys whose visible start matches: a leaked key pasted whole (only its first 14 characters are sent), or its start (lk_live_…)')
      .argument('<key>', 'the key, or its first characters'),
    (api, key: string) => api.get<admin.ApiKeySearch>(`/admin/api-keys?prefix=${encodeURIComponent(visibleStart(key))}`),
    (found) =>
      found.data.length === 0
        ? 'Ninguna API key empieza así.'
        : listTable(
            ['id', 'prefix', 'mode', 'accountId', 'account', 'createdAt', 'revokedAt'],
            found.data.map((key) => [key.id, key.displayPrefix, key.mode, key.accountId, key.accountName, key.createdAt, key.revokedAt ?? '-']),
          ),
  ).addHelpText('after', '\nExample (a key seen in a log or a repository):\n  npm run admin -- keys find lk_live_Ab12Cd')
  let revoked: admin.ApiKeyFound | undefined
  apiCommand(
    context,
    keys
      .command('revoke')
      .description(
        'revoke an API key at once, on every gateway: by its id, or by the key (or its whole visible start, 14 characters) when exactly one live key has that start (the API answers no body: --json prints nothing)',
      )
      .argument('<key>', 'API key id, or the key or its visible start (lk_live_ and 6 characters)'),
    async (api, key: string) => {
      revoked = undefined
      if (!/^lk_(live|test)_/.test(key)) return api.delete(`/admin/api-keys/${segment(key)}`)
      if (key.length < 14) throw new CliError(`Para revocar por la key hacen falta sus 14 primeros caracteres (lk_live_ y 6 más); ${key} es menos.`)
      const shown = visibleStart(key)
      const { body } = await api.get<admin.ApiKeySearch>(`/admin/api-keys?prefix=${encodeURIComponent(shown)}`)
      const live = body.data.filter((found) => found.displayPrefix === shown && found.revokedAt === null)
      if (live.length === 0) throw new CliError(`Ninguna API key sin revocar empieza por ${shown}.`)
      if (live.length > 1) {
        throw new CliError(
          `Varias API keys sin revocar empiezan por ${shown}: revoca una por su id.\n${live.map((found) => `  ${found.id}  ${found.accountName}`).join('\n')}`,
        )
      }
      revoked = live[0]
      return api.delete(`/admin/api-keys/${segment(live[0]!.id)}`)
    },
    () => (revoked ? `API key revocada: ${revoked.id} (${revoked.displayPrefix}…), de ${revoked.accountName} (${revoked.accountId}).` : 'API key revocada.'),
  )
}
