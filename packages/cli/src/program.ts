import { readFile } from 'node:fs/promises'
import { Command, InvalidArgumentError, Option } from 'commander'
import { modeLabel, type admin, type NamedEntry, type publicApi } from '@letters/contracts'
import { AdminApi, CliError, segment, type ApiAnswer } from './admin-api.js'
import { age, listTable, recordTable, type Io } from './output.js'

export const DEFAULT_LETTERS_URL = 'http://127.0.0.1:3000'

/** What the CLI takes from its environment (main.ts reads it): the gateway and its admin token. */
export interface Settings {
  lettersUrl: string | undefined
  adminToken: string | undefined
}

/** The API client, once a command needs it: `--help` works without a token. */
function connect(settings: Settings): AdminApi {
  if (!settings.adminToken) {
    throw new CliError('Falta ADMIN_TOKEN: exporta el token de administración del gateway (ADMIN_TOKEN=… npm run admin -- <orden>)')
  }
  const url = settings.lettersUrl || DEFAULT_LETTERS_URL
  let baseUrl: URL
  try {
    baseUrl = new URL(url)
  } catch {
    throw new CliError(`LETTERS_URL no es una URL válida: '${url}' (por ejemplo ${DEFAULT_LETTERS_URL})`)
  }
  if (baseUrl.protocol !== 'http:' && baseUrl.protocol !== 'https:') throw new CliError(`LETTERS_URL debe empezar por http:// o https://: '${url}'`)
  return new AdminApi({ baseUrl, token: settings.adminToken })
}

/** An integer argument; its range is the API's to judge, so the rule lives in one place. */
const integer = (what: string) => (value: string) => {
  if (!/^-?\d+$/.test(value)) throw new InvalidArgumentError(`${what} debe ser un número entero.`)
  return Number(value)
}

type Letter = (admin.Card | publicApi.Card) & { accountId?: string }

function renderLetter(letter: Letter): string {
  const to = letter.recipient
  const details = recordTable([
    ['id', letter.id],
    ...(letter.accountId ? [['accountId', letter.accountId] as [string, string]] : []),
    ['mode', modeLabel(letter.livemode)],
    ['type', letter.type],
    ['status', letter.status],
    ['recipient', [`${to.name} ${to.surname}`, to.company, to.address, `${to.zip} ${to.city}`, to.province, to.country].filter(Boolean).join(', ')],
    ['cost', letter.cost],
    ['sendAt', letter.sendAt],
    ['createdAt', letter.createdAt],
    ['updatedAt', letter.updatedAt],
  ])
  return `${details}\n\n${listTable(
    ['status', 'at', 'detail'],
    letter.events.map((event) => [event.status, event.at, event.detail]),
  )}`
}

/** The hint under a list that has another page. */
const nextPage = (nextCursor: string | null) => (nextCursor ? `\nHay más: repite la orden con --cursor ${nextCursor}` : '')

const pageQuery = (options: { limit?: number; cursor?: string }) => {
  const query = new URLSearchParams()
  if (options.limit !== undefined) query.set('limit', String(options.limit))
  if (options.cursor !== undefined) query.set('cursor', options.cursor)
  return query.size > 0 ? `?${query}` : ''
}

/** The JSON body of `campaigns add --file`. */
async function readJsonFile(path: string): Promise<unknown> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT') throw new CliError(`No existe el fichero '${path}'`)
    if (code === 'EISDIR') throw new CliError(`'${path}' es una carpeta, no un fichero JSON`)
    if (code === 'EACCES') throw new CliError(`No hay permiso para leer el fichero '${path}'`)
    throw new CliError(`No se puede leer el fichero '${path}': ${(error as Error).message}`)
  }
  try {
    return JSON.parse(text) as unknown
  } catch (error) {
    throw new CliError(`El fichero '${path}' no es un JSON válido: ${(error as Error).message}`)
  }
}

/**
 * The whole command tree. Each command prints a table for people, or with `--json` the API's
 * JSON exactly as it came; an error prints the API's Spanish message (or the CLI's own) on
 * stderr, and main.ts turns it into the exit code.
 */
export function buildProgram(settings: Settings, io: Io): Command {
  const program = new Command('admin')
    .description(`Operator CLI over the letters admin API (LETTERS_URL, default ${DEFAULT_LETTERS_URL}; ADMIN_TOKEN). Run it as: npm run admin -- <command>`)
    .configureOutput({ writeOut: (text) => io.out(text), writeErr: (text) => io.err(text) })
    // Errors end the process in main.ts, with 2 for a usage error: a test or a script sees the code.
    .exitOverride()
    .showHelpAfterError('(add --help for usage)')

  /**
   * A command that calls the API, with `--json`: `call` gets the client, then the command's
   * arguments and its options as Commander parsed them; `render` makes the table of the answer.
   */
  function apiCommand<Body>(command: Command, call: (api: AdminApi, ...args: never[]) => Promise<ApiAnswer<Body>>, render: (body: Body) => string): Command {
    return command.option('--json', "print the admin API's JSON as it is, for scripts").action(async (...received: unknown[]) => {
      // Commander passes the arguments, then the options, then the command itself.
      const args = received.slice(0, -1)
      const options = args.at(-1) as { json?: boolean }
      const answer = await call(connect(settings), ...(args as never[]))
      if (!options.json) io.out(render(answer.body))
      else if (answer.text !== '') io.out(answer.text)
    })
  }

  const accounts = program.command('accounts').description('open and look at client accounts')
  apiCommand(
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
    accounts
      .command('list')
      .description('every account with its balance, newest first, a page at a time')
      .option('--limit <n>', 'accounts per page (1-100, default 20)', integer('--limit'))
      .option('--cursor <cursor>', 'the next page, as the previous one said'),
    (api, options: { limit?: number; cursor?: string; json?: boolean }) => api.get<admin.AccountList>(`/admin/accounts${pageQuery(options)}`),
    (page) =>
      page.data.length === 0
        ? 'No hay cuentas.'
        : listTable(
            ['id', 'name', 'balance', 'createdAt'],
            page.data.map((account) => [account.id, account.name, account.balance, account.createdAt]),
          ) + nextPage(page.nextCursor),
  )

  const keys = program.command('keys').description("issue and revoke an account's API keys")
  apiCommand(
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
  apiCommand(
    keys
      .command('revoke')
      .description('revoke an API key at once, on every gateway (the API answers no body: --json prints nothing)')
      .argument('<key>', 'API key id'),
    (api, key: string) => api.delete(`/admin/api-keys/${segment(key)}`),
    () => 'API key revocada.',
  )

  const credits = program.command('credits').description("move an account's credits")
  apiCommand(
    credits
      .command('add')
      .description('add credits to an account, or take them away with a negative amount (an adjustment)')
      .argument('<account>', 'account id')
      .argument('<amount>', 'credits, an integer other than 0; negative for an adjustment, e.g. -5', integer('El importe'))
      .option('--reason <reason>', 'why, for the ledger'),
    (api, account: string, amount: number, options: { reason?: string; json?: boolean }) =>
      api.post<admin.Balance>(`/admin/accounts/${segment(account)}/credits`, { amount, ...(options.reason === undefined ? {} : { reason: options.reason }) }),
    (balance) => recordTable([['balance', balance.balance]]),
  ).addHelpText(
    'after',
    '\nExamples:\n  npm run admin -- credits add <account> 500 --reason "pedido 881"\n  npm run admin -- credits add <account> -5 --reason "corrección"',
  )

  /** `<what> add ACCOUNT --name N`: a named entry of the account (designs, senders, signatures). */
  const namedEntry =
    (route: (options: { kind?: string }) => string) => (api: AdminApi, account: string, options: { name: string; kind?: string; json?: boolean }) =>
      api.post<NamedEntry>(`/admin/accounts/${segment(account)}/${route(options)}`, { name: options.name })
  const renderEntry = (entry: NamedEntry) =>
    recordTable([
      ['id', entry.id],
      ['name', entry.name],
    ])

  apiCommand(
    program
      .command('designs')
      .description("an account's card and envelope designs")
      .command('add')
      .description('add a card or envelope design to an account')
      .argument('<account>', 'account id')
      .addOption(new Option('--kind <kind>', 'card or envelope').choices(['card', 'envelope']).makeOptionMandatory())
      .requiredOption('--name <name>', "the design's name"),
    namedEntry((options) => (options.kind === 'card' ? 'card-designs' : 'envelope-designs')),
    renderEntry,
  )
  apiCommand(
    program
      .command('senders')
      .description("an account's senders")
      .command('add')
      .description('add a sender to an account')
      .argument('<account>', 'account id')
      .requiredOption('--name <name>', "the sender's name, as it signs"),
    namedEntry(() => 'senders'),
    renderEntry,
  )
  apiCommand(
    program
      .command('signatures')
      .description("an account's signatures")
      .command('add')
      .description('add a signature to an account')
      .argument('<account>', 'account id')
      .requiredOption('--name <name>', "the signature's name"),
    namedEntry(() => 'signatures'),
    renderEntry,
  )

  apiCommand(
    program
      .command('campaigns')
      .description("an account's campaigns")
      .command('add')
      .description('add a campaign to an account, its body (POST /admin/accounts/{id}/campaigns) read from a JSON file')
      .argument('<account>', 'account id')
      .requiredOption('--file <file>', 'the campaign as JSON: { name, cardDesignId, envelopeDesignId, senderId, fontName?, message, variables }'),
    async (api, account: string, options: { file: string; json?: boolean }) =>
      api.post<admin.Campaign>(`/admin/accounts/${segment(account)}/campaigns`, await readJsonFile(options.file)),
    (campaign) =>
      `${recordTable([
        ['id', campaign.id],
        ['name', campaign.name],
        ['active', campaign.active],
      ])}\n` +
      listTable(
        ['variable', 'maxSize', 'defaultValue', 'example'],
        campaign.variables.map((variable) => [variable.name, variable.maxSize, variable.defaultValue, variable.example]),
      ),
  )

  const letters = program.command('letters').description('look at letters and act on them for ops')
  apiCommand(
    letters.command('show').description('a letter of any account, with its history').argument('<letter>', 'letter (card) id'),
    (api, id: string) => api.get<admin.Card>(`/admin/cards/${segment(id)}`),
    renderLetter,
  )
  apiCommand(
    letters.command('mailed').description('record that a printed letter was handed to the post').argument('<letter>', 'letter (card) id'),
    (api, id: string) => api.post<publicApi.Card>(`/admin/cards/${segment(id)}/mailed`),
    renderLetter,
  )
  apiCommand(
    letters
      .command('stuck')
      .description('letters that need ops: failed, or without progress for longer than RECONCILE_AFTER_MS; longest stuck first')
      .option('--limit <n>', 'letters per page (1-100, default 20)', integer('--limit'))
      .option('--cursor <cursor>', 'the next page, as the previous one said'),
    (api, options: { limit?: number; cursor?: string; json?: boolean }) => api.get<admin.StuckLetterList>(`/admin/stuck-letters${pageQuery(options)}`),
    (page) =>
      page.data.length === 0
        ? 'No hay cartas atascadas.'
        : listTable(
            ['id', 'accountId', 'mode', 'status', 'stuckFor', 'updatedAt'],
            page.data.map((letter) => [letter.id, letter.accountId, modeLabel(letter.livemode), letter.status, age(letter.stuckForSeconds), letter.updatedAt]),
          ) + nextPage(page.nextCursor),
  )
  apiCommand(
    letters
      .command('retry')
      .description('send a failed letter back to production, or resume a stuck one; safe to repeat (a letter is printed once)')
      .argument('<letter>', 'letter (card) id'),
    (api, id: string) => api.post<admin.Card>(`/admin/cards/${segment(id)}/retry`),
    renderLetter,
  )

  return program
}
