import { readFile, stat } from 'node:fs/promises'
import { extname } from 'node:path'
import { Command, InvalidArgumentError, Option } from 'commander'
import {
  ARTWORK_MAX_BYTES,
  BLEED_MM,
  DEFAULT_CARD_FORMAT,
  DEFAULT_ENVELOPE_FORMAT,
  DEFAULT_FONT,
  FONT_MAX_BYTES,
  artworkContentTypes,
  cardFormatNames,
  cardFormats,
  cardProductions,
  envelopeFormatNames,
  fontContentTypes,
  fontNames,
  letterStatusNames,
  letterStatuses,
  modeLabel,
  qrCorners,
  type QrPlacement,
  returnReasonLabels,
  returnReasons,
  type AccountFont,
  type ArtworkContentType,
  type ArtworkMeta,
  type CardDesign,
  type EnvelopeDesign,
  type FontContentType,
  type LetterStatus,
  type Mode,
  type ReturnReason,
  type Sender,
  type Signature,
  type Suppression,
  type admin,
  type dashboard,
  type publicApi,
} from '@letters/contracts'
import { AdminApi, CliError, segment, type ApiAnswer } from './admin-api.js'
import { age, fileSize, listTable, millimetres, num, recordTable, type Cell, type Io } from './output.js'
import { DEFAULT_LETTERS_URL, type GroupName, type Settings } from './program.js'

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

/** A return reason with its name as the floor reads it: "bad_address (Dirección incorrecta o incompleta)". */
const reasonWithLabel = (reason: ReturnReason) => `${reason} (${returnReasonLabels[reason]})`

/** `--reason`: one of the contract's reasons, refused here (a usage error) before anything is sent. */
function returnReason(value: string): ReturnReason {
  if ((returnReasons as readonly string[]).includes(value)) return value as ReturnReason
  throw new InvalidArgumentError(`El motivo debe ser uno de: ${returnReasons.map(reasonWithLabel).join(', ')}.`)
}

/** `--status`: one of the contract's statuses, refused here (a usage error) before anything is sent. */
function letterStatusOption(value: string): LetterStatus {
  if ((letterStatuses as readonly string[]).includes(value)) return value as LetterStatus
  throw new InvalidArgumentError(`El estado debe ser uno de: ${letterStatuses.map((status) => `${status} (${letterStatusNames[status]})`).join(', ')}.`)
}

/** `letters list` as Commander parses it: the filters of GET /admin/cards, named as an operator types them. */
interface LetterListOptions {
  account?: string
  mode?: Mode
  status?: LetterStatus
  campaign?: string
  from?: string
  to?: string
  limit?: number
  cursor?: string
  json?: boolean
}

/** The query of GET /admin/cards; the API judges the ids and the dates, so that their rules live in one place. */
function letterListQuery(options: LetterListOptions): string {
  const query = new URLSearchParams()
  const add = (name: string, value: string | number | undefined) => value !== undefined && query.set(name, String(value))
  add('accountId', options.account)
  add('mode', options.mode)
  add('status', options.status)
  add('campaignId', options.campaign)
  add('from', options.from)
  add('to', options.to)
  add('limit', options.limit)
  add('cursor', options.cursor)
  return query.size > 0 ? `?${query}` : ''
}

/** A letter's recipient in a list's cell: who and where, or that it was erased. */
const recipientCell = (letter: publicApi.CardSummary) =>
  letter.personalDataErasedAt ? '(borrado)' : `${letter.recipient.name} ${letter.recipient.surname}, ${letter.recipient.city}`

/** What a return did to the account's suppression list, under the letter. */
function suppressionNote(returned: admin.ReturnedLetter): string {
  if (returned.suppressionId)
    return `Dirección añadida a la lista de supresión de la cuenta (entrada ${returned.suppressionId}): sus cartas nuevas a ella se rechazan salvo con ignoreSuppression.`
  if (returned.card.returnReason === 'refused') return 'Rehusada: la rechazó el destinatario, no la dirección, que no se añade a la lista de supresión.'
  return 'Sus datos personales ya estaban borrados: no queda dirección que añadir a la lista de supresión.'
}

function renderLetter(letter: Letter): string {
  const to = letter.recipient
  const details = recordTable([
    ['id', letter.id],
    ...(letter.accountId ? [['accountId', letter.accountId] as [string, string]] : []),
    ['mode', modeLabel(letter.livemode)],
    ['type', letter.type],
    ['status', letter.status],
    [
      'recipient',
      letter.personalDataErasedAt
        ? `(borrado el ${letter.personalDataErasedAt}), ${to.country}`
        : [`${to.name} ${to.surname}`, to.company, to.address, `${to.zip} ${to.city}`, to.province, to.country].filter(Boolean).join(', '),
    ],
    ['cost', letter.cost],
    ...(letter.returnReason
      ? ([
          ['returnedAt', letter.returnedAt],
          ['returnReason', reasonWithLabel(letter.returnReason)],
        ] as Array<[string, Cell]>)
      : []),
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

const pageQuery = (options: { limit?: number; cursor?: string; mode?: Mode }) => {
  const query = new URLSearchParams()
  if (options.mode !== undefined) query.set('mode', options.mode)
  if (options.limit !== undefined) query.set('limit', String(options.limit))
  if (options.cursor !== undefined) query.set('cursor', options.cursor)
  return query.size > 0 ? `?${query}` : ''
}

/** Why a file given on the command line cannot be read, as the operator reads it; `what` names what it should have been. */
function unreadable(error: unknown, path: string, what: string): CliError {
  const code = (error as NodeJS.ErrnoException).code
  if (code === 'ENOENT') return new CliError(`No existe el fichero '${path}'`)
  if (code === 'EISDIR') return new CliError(`'${path}' es una carpeta, no ${what}`)
  if (code === 'EACCES') return new CliError(`No hay permiso para leer el fichero '${path}'`)
  return new CliError(`No se puede leer el fichero '${path}': ${(error as Error).message}`)
}

/** The JSON body of `campaigns add --file`. */
async function readJsonFile(path: string): Promise<unknown> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (error) {
    throw unreadable(error, path, 'un fichero JSON')
  }
  try {
    return JSON.parse(text) as unknown
  } catch (error) {
    throw new CliError(`El fichero '${path}' no es un JSON válido: ${(error as Error).message}`)
  }
}

/** A mistake in the command line that Commander cannot see (options that do not go together): exit 2, as Commander's usage errors. */
const usageError = (message: string) => new CliError(message, 2)

/** "a", "a y b", "a, b y c": a list in a Spanish sentence. */
function spanishList(items: string[], conjunction = 'y'): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} ${conjunction} ${items.at(-1)}`
}

/** The file types an artwork is uploaded as, by extension: the API takes the file with this Content-Type. */
const artworkExtensions: Record<string, ArtworkContentType> = { '.svg': 'image/svg+xml', '.pdf': 'application/pdf', '.png': 'image/png' }
/** A signature is drawn by a pen or printed as an image: paths in an SVG, or a PNG; never a PDF. */
const signatureContentTypes: readonly ArtworkContentType[] = ['image/svg+xml', 'image/png']

/** The file types an account's font is uploaded as, by extension. */
const fontExtensions: Record<string, FontContentType> = { '.ttf': 'font/ttf', '.otf': 'font/otf', '.woff': 'font/woff', '.woff2': 'font/woff2' }

/**
 * A file as the API takes it: its bytes and the Content-Type its extension says (`types`, of which
 * `accepted`). A file of another type, or larger than `maxBytes`, is refused here, before its
 * bytes travel.
 */
async function readUpload<T extends string>(
  path: string,
  types: Record<string, T>,
  accepted: readonly T[],
  maxBytes: number,
  rule: string,
): Promise<{ data: Buffer; contentType: T }> {
  const contentType = types[extname(path).toLowerCase()]
  if (!contentType || !accepted.includes(contentType)) {
    const extensions = Object.keys(types).filter((extension) => accepted.includes(types[extension]!))
    throw new CliError(`El fichero '${path}' no es ${spanishList(extensions, 'ni')}: ${rule} (el tipo se deduce de la extensión)`)
  }
  try {
    const { size } = await stat(path)
    if (size > maxBytes) {
      // Rounded up, so a file just over the limit never reads as the limit itself.
      const megabytes = Math.ceil((size / 1024 / 1024) * 10) / 10
      throw new CliError(`El fichero '${path}' ocupa ${num(megabytes, 1)} MB: el máximo es ${num(maxBytes / 1024 / 1024)} MB`)
    }
    return { data: await readFile(path), contentType }
  } catch (error) {
    if (error instanceof CliError) throw error
    throw unreadable(error, path, 'un fichero')
  }
}

const readArtwork = (path: string, accepted: readonly ArtworkContentType[], rule: string) =>
  readUpload(path, artworkExtensions, accepted, ARTWORK_MAX_BYTES, rule)

const designKinds = ['card', 'envelope'] as const
type DesignKind = (typeof designKinds)[number]
const designRoutes: Record<DesignKind, string> = { card: 'card-designs', envelope: 'envelope-designs' }

/** `designs add` and `designs update` as Commander parses them; `false` is a `--no-…` option: clear the field. */
interface DesignOptions {
  kind: DesignKind
  name?: string
  format?: string
  production?: string
  stockCode?: string | false
  paperColor?: string | false
  qr?: QrPlacement | false
  json?: boolean
}

/** `--qr corner:mm` as the API takes it, `{ corner, sizeMm }`; the API judges the corner and the size. */
function qrPlacementOption(value: string): QrPlacement {
  const match = /^([a-z-]+):(\d+(?:\.\d+)?)$/.exec(value.trim())
  if (!match)
    throw new InvalidArgumentError(`Escribe el sitio del código QR como rincón:milímetros, por ejemplo bottom-right:20 (rincones: ${qrCorners.join(', ')})`)
  return { corner: match[1] as QrPlacement['corner'], sizeMm: Number(match[2]) }
}

/** `#RRGGBB` as given, or the six digits alone with their `#` put back; the API judges the colour. */
const hexColor = (value: string) => (/^[0-9A-Fa-f]{6}$/.test(value) ? `#${value}` : value)

/**
 * The body of a design's POST or PATCH: the options given, and no others (a PATCH leaves the rest
 * as they are). Each kind has fields of its own; the other kind's option is refused here rather
 * than sent for the API to call an unknown field.
 */
function designBody(options: DesignOptions): Record<string, unknown> {
  if (options.kind === 'envelope' && options.production !== undefined)
    throw usageError('La opción --production solo vale para diseños de tarjeta (--kind card)')
  if (options.kind === 'card' && options.paperColor !== undefined) throw usageError('La opción --paper-color solo vale para diseños de sobre (--kind envelope)')
  if (options.kind === 'envelope' && options.qr !== undefined) throw usageError('La opción --qr solo vale para diseños de tarjeta (--kind card)')
  const body: Record<string, unknown> = {}
  if (options.name !== undefined) body.name = options.name
  if (options.format !== undefined) body.format = options.format
  if (options.production !== undefined) body.production = options.production
  if (options.stockCode !== undefined) body.stockCode = options.stockCode === false ? null : options.stockCode
  if (options.paperColor !== undefined) body.paperColor = options.paperColor === false ? null : options.paperColor
  if (options.qr !== undefined) body.qrPlacement = options.qr === false ? null : options.qr
  return body
}

/** An artwork's rows: its version, type and weight, and its sha256 to compare with the file sent; blank when none was uploaded. */
function artworkRows(artwork: ArtworkMeta | null): Array<[string, Cell]> {
  if (!artwork) return [['artwork', null]]
  return [
    ['artwork', `v${artwork.version} ${artwork.contentType} ${fileSize(artwork.bytes)}`],
    ['sha256', artwork.sha256],
  ]
}

function renderDesign(design: CardDesign | EnvelopeDesign): string {
  const rows: Array<[string, Cell]> = [
    ['id', design.id],
    ['name', design.name],
    ['format', design.format],
    ['size', millimetres(design.size)],
  ]
  if ('production' in design) rows.push(['production', design.production])
  if ('qrPlacement' in design) rows.push(['qrPlacement', design.qrPlacement && `${design.qrPlacement.corner}, ${design.qrPlacement.sizeMm} mm`])
  rows.push(['stockCode', design.stockCode])
  if ('paperColor' in design) rows.push(['paperColor', design.paperColor])
  return recordTable([...rows, ...artworkRows(design.artwork)])
}

/** `senders add` and `senders update` as Commander parses them; `returnAddress: false` is `--no-return-address`. */
interface SenderOptions {
  name?: string
  returnName?: string
  returnCompany?: string
  returnAddress?: string | false
  returnZip?: string
  returnCity?: string
  returnProvince?: string
  returnCountry?: string
  json?: boolean
}

const requiredReturnFields = [
  ['--return-name', 'returnName'],
  ['--return-address', 'returnAddress'],
  ['--return-zip', 'returnZip'],
  ['--return-city', 'returnCity'],
  ['--return-country', 'returnCountry'],
] as const
const optionalReturnFields = [
  ['--return-company', 'returnCompany'],
  ['--return-province', 'returnProvince'],
] as const

/**
 * The sender's return address from the `--return-…` options: undefined when none was given, null
 * for `--no-return-address`. The API replaces an address whole, so a partial one is refused here,
 * naming the options it lacks; the API checks and normalizes the rest.
 */
function returnAddressOf(options: SenderOptions): admin.ReturnAddressBody | null | undefined {
  const given = [...requiredReturnFields, ...optionalReturnFields].filter(([, key]) => options[key] !== undefined && options[key] !== false)
  if (options.returnAddress === false) {
    if (given.length > 0)
      throw usageError(`--no-return-address quita la dirección de remite: no se puede dar junto con ${spanishList(given.map(([flag]) => flag))}`)
    return null
  }
  if (given.length === 0) return undefined
  const missing = requiredReturnFields.filter(([, key]) => options[key] === undefined).map(([flag]) => flag)
  if (missing.length > 0)
    throw usageError(
      `La dirección de remite está incompleta: ${missing.length === 1 ? 'falta' : 'faltan'} ${spanishList(missing)} ` +
        `(se necesitan ${spanishList(requiredReturnFields.map(([flag]) => flag))}; ${spanishList(optionalReturnFields.map(([flag]) => flag))} son opcionales)`,
    )
  return {
    name: options.returnName!,
    ...(options.returnCompany === undefined ? {} : { company: options.returnCompany }),
    address: options.returnAddress!,
    zip: options.returnZip!,
    city: options.returnCity!,
    ...(options.returnProvince === undefined ? {} : { province: options.returnProvince }),
    // The API judges the code, as it judges the other fields.
    country: options.returnCountry! as admin.ReturnAddressBody['country'],
  }
}

function renderSender(sender: Sender): string {
  const address = sender.returnAddress
  return recordTable([
    ['id', sender.id],
    ['name', sender.name],
    [
      'returnAddress',
      address &&
        [address.name, address.company, address.address, `${address.zip} ${address.city}`, address.province, address.countryName].filter(Boolean).join(', '),
    ],
  ])
}

function renderFont(font: AccountFont): string {
  const file: Array<[string, Cell]> = font.file
    ? [
        ['file', `v${font.file.version} ${font.file.contentType} ${fileSize(font.file.bytes)}`],
        ['sha256', font.file.sha256],
      ]
    : [['file', null]]
  return recordTable([['name', font.name], ['family', font.family], ['plotterFont', font.plotterFont], ...file])
}

function renderSignature(signature: Signature): string {
  return recordTable([['id', signature.id], ['name', signature.name], ...artworkRows(signature.artwork)])
}

/**
 * The commands of the group `name`, added to `group` (program.ts made it, with its description).
 * Each prints a table for people, or with `--json` the API's JSON exactly as it came; an error
 * prints the API's Spanish message (or the CLI's own) on stderr, and main.ts turns it into the
 * exit code.
 */
export function addGroupCommands(name: GroupName, group: Command, settings: Settings, io: Io): void {
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

  const builders: Record<GroupName, (group: Command) => void> = {
    accounts: (accounts: Command) => {
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
    },
    users: (users: Command) => {
      apiCommand(
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
    },
    keys: (keys: Command) => {
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
      /** What a key, or its visible start, is searched by: its first 14 characters, never the whole key (a URL is logged). */
      const visibleStart = (key: string) => key.slice(0, 14)
      apiCommand(
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
        () =>
          revoked ? `API key revocada: ${revoked.id} (${revoked.displayPrefix}…), de ${revoked.accountName} (${revoked.accountId}).` : 'API key revocada.',
      )
    },
    credits: (credits: Command) => {
      apiCommand(
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
    },
    designs: (designs: Command) => {
      const kindOption = () => new Option('--kind <kind>', 'card or envelope').choices(designKinds).makeOptionMandatory()
      /** The product's options, for `add` and `update` alike; each kind takes its own (designBody refuses the other's). */
      const productOptions = (command: Command) =>
        command
          .option(
            '--format <format>',
            `the size: a card ${cardFormatNames.join(', ')} (default ${DEFAULT_CARD_FORMAT}); an envelope ${envelopeFormatNames.join(', ')} (default ${DEFAULT_ENVELOPE_FORMAT})`,
          )
          .addOption(
            new Option(
              '--production <production>',
              "a card's: printed, the floor prints its artwork on blank stock (default); preprinted, it loads stock that already carries it (needs --stock-code; its artwork, if any, pictures that front in proofs only)",
            ).choices(cardProductions),
          )
          .option('--stock-code <code>', 'the code of the stock the floor loads for it, e.g. CLASICA-A6')
          .option(
            '--paper-color <color>',
            `an envelope's paper colour, shown in proofs: #RRGGBB, or the six digits alone (the shell takes an unquoted # for a comment)`,
            hexColor,
          )
          .option(
            '--qr <corner:mm>',
            `a card's place for the QR code of letters sent with a trackingUrl: a corner (${qrCorners.join(', ')}) and its side, 15 to 40 mm, e.g. bottom-right:20 (default: bottom-right, 18 mm)`,
            qrPlacementOption,
          )

      apiCommand(
        productOptions(
          designs
            .command('add')
            .description('add a card or envelope design to an account')
            .argument('<account>', 'account id')
            .addOption(kindOption())
            .requiredOption('--name <name>', "the design's name"),
        ),
        (api, account: string, options: DesignOptions) =>
          api.post<CardDesign | EnvelopeDesign>(`/admin/accounts/${segment(account)}/${designRoutes[options.kind]}`, designBody(options)),
        renderDesign,
      ).addHelpText(
        'after',
        '\nExamples:\n' +
          '  npm run admin -- designs add <account> --kind card --name "Tarjeta floral" --format A5\n' +
          '  npm run admin -- designs add <account> --kind card --name "Tarjeta clásica" --production preprinted --stock-code CLASICA-A6\n' +
          '  npm run admin -- designs add <account> --kind envelope --name "Sobre kraft" --format C6 --stock-code C6-KRAFT --paper-color C8A27A',
      )
      apiCommand(
        productOptions(
          designs
            .command('update')
            .description("change a design's name or product; letters already accepted keep what they were accepted with")
            .argument('<account>', 'account id')
            .argument('<design>', 'design id')
            .addOption(kindOption())
            .option('--name <name>', "the design's new name"),
        )
          .option('--no-stock-code', 'clear its stock code')
          .option('--no-paper-color', "clear an envelope's paper colour")
          .option('--no-qr', "put a card's QR code back in its default place"),
        (api, account: string, design: string, options: DesignOptions) => {
          const body = designBody(options)
          if (Object.keys(body).length === 0)
            throw usageError(
              'Indica qué cambiar: --name, --format, --production o --qr (tarjeta), --stock-code o --no-stock-code, --paper-color o --no-paper-color (sobre)',
            )
          return api.patch<CardDesign | EnvelopeDesign>(`/admin/accounts/${segment(account)}/${designRoutes[options.kind]}/${segment(design)}`, body)
        },
        renderDesign,
      ).addHelpText(
        'after',
        '\nExamples:\n' +
          '  npm run admin -- designs update <account> <design> --kind card --production preprinted --stock-code CLASICA-A6\n' +
          '  npm run admin -- designs update <account> <design> --kind envelope --no-paper-color',
      )
      apiCommand(
        designs
          .command('artwork')
          .summary("upload a design's artwork: a card's front or an envelope's logo")
          .description(
            `upload a design's artwork, a new version each time: a card's front at its size plus ${BLEED_MM} mm of bleed on every side (A6: ${cardFormats.A6.width + 2 * BLEED_MM} × ${cardFormats.A6.height + 2 * BLEED_MM} mm; a preprinted card's is shown in proofs and previews, never printed), or an envelope's logo for the sender's corner`,
          )
          .argument('<account>', 'account id')
          .argument('<design>', 'design id')
          .argument('<file>', 'an .svg, .pdf or .png file, sent as it is (its type is taken from the extension)')
          .addOption(kindOption()),
        async (api, account: string, design: string, file: string, options: { kind: DesignKind }) => {
          const path = `/admin/accounts/${segment(account)}/${designRoutes[options.kind]}/${segment(design)}/artwork`
          const artwork = await readArtwork(file, artworkContentTypes, 'el arte de un diseño se sube como SVG, PDF o PNG')
          return api.upload<CardDesign | EnvelopeDesign>(path, artwork.data, artwork.contentType)
        },
        renderDesign,
      ).addHelpText('after', '\nExample:\n  npm run admin -- designs artwork <account> <design> frente.pdf --kind card')
    },
    senders: (senders: Command) => {
      /** The return address's options: all of them, but company and province, or none. */
      const returnAddressOptions = (command: Command) =>
        command
          .option('--return-name <name>', 'return address: the name on it, e.g. the shop')
          .option('--return-company <company>', 'return address: a company line (optional)')
          .option('--return-address <street>', 'return address: street and number')
          .option('--return-zip <zip>', 'return address: postal code')
          .option('--return-city <city>', 'return address: city')
          .option('--return-province <province>', 'return address: province (optional)')
          .option('--return-country <country>', 'return address: ISO 3166-1 country code, e.g. ES')
      const returnAddressExample =
        '--return-name "Papelería Luna" --return-address "Calle Sierpes 4" --return-zip 41004 --return-city Sevilla --return-country ES'
      apiCommand(
        returnAddressOptions(
          senders
            .command('add')
            .description('add a sender to an account, with a return address (checked and normalized by the API) or without one')
            .argument('<account>', 'account id')
            .requiredOption('--name <name>', "the sender's name, as it signs"),
        ),
        (api, account: string, options: SenderOptions) => {
          const returnAddress = returnAddressOf(options)
          return api.post<Sender>(`/admin/accounts/${segment(account)}/senders`, {
            name: options.name,
            ...(returnAddress === undefined ? {} : { returnAddress }),
          })
        },
        renderSender,
      ).addHelpText('after', `\nExample:\n  npm run admin -- senders add <account> --name "Lucía" ${returnAddressExample}`)
      apiCommand(
        returnAddressOptions(
          senders
            .command('update')
            .description("change a sender's name or return address (the address is replaced whole: give all its fields)")
            .argument('<account>', 'account id')
            .argument('<sender>', 'sender id')
            .option('--name <name>', "the sender's new name"),
        ).option('--no-return-address', 'remove its return address'),
        (api, account: string, sender: string, options: SenderOptions) => {
          const returnAddress = returnAddressOf(options)
          const body = { ...(options.name === undefined ? {} : { name: options.name }), ...(returnAddress === undefined ? {} : { returnAddress }) }
          if (Object.keys(body).length === 0) throw usageError('Indica qué cambiar: --name, la dirección de remite (--return-…) o --no-return-address')
          return api.patch<Sender>(`/admin/accounts/${segment(account)}/senders/${segment(sender)}`, body)
        },
        renderSender,
      ).addHelpText(
        'after',
        `\nExamples:\n  npm run admin -- senders update <account> <sender> ${returnAddressExample}\n  npm run admin -- senders update <account> <sender> --no-return-address`,
      )
    },
    signatures: (signatures: Command) => {
      apiCommand(
        signatures
          .command('add')
          .description('add a signature to an account (its drawing comes after, with signatures artwork)')
          .argument('<account>', 'account id')
          .requiredOption('--name <name>', "the signature's name"),
        (api, account: string, options: { name: string; json?: boolean }) =>
          api.post<Signature>(`/admin/accounts/${segment(account)}/signatures`, { name: options.name }),
        renderSignature,
      )
      apiCommand(
        signatures
          .command('artwork')
          .summary("upload a signature's drawing")
          .description("upload a signature's drawing, a new version each time: an SVG of paths only (what the plotter draws) or a transparent PNG")
          .argument('<account>', 'account id')
          .argument('<signature>', 'signature id')
          .argument('<file>', 'an .svg or .png file, sent as it is (its type is taken from the extension)'),
        async (api, account: string, signature: string, file: string) => {
          const path = `/admin/accounts/${segment(account)}/signatures/${segment(signature)}/artwork`
          const artwork = await readArtwork(file, signatureContentTypes, 'una firma se sube como SVG de trazos o PNG')
          return api.upload<Signature>(path, artwork.data, artwork.contentType)
        },
        renderSignature,
      ).addHelpText('after', '\nExample:\n  npm run admin -- signatures artwork <account> <signature> firma.svg')
    },
    fonts: (fonts: Command) => {
      apiCommand(
        fonts
          .command('add')
          .description('add a font to an account, without a file yet (letters can use it once it has one)')
          .argument('<account>', 'account id')
          .requiredOption('--name <name>', 'the value requests send as fontName: 2 to 40 lower-case letters, digits or hyphens')
          .requiredOption('--family <family>', 'the name people read')
          .option('--plotter-font <hand>', `the built-in hand the plotter writes it in (${fontNames.join(', ')}; default ${DEFAULT_FONT})`),
        (api, account: string, options: { name: string; family: string; plotterFont?: string; json?: boolean }) =>
          api.post<AccountFont>(`/admin/accounts/${segment(account)}/fonts`, { name: options.name, family: options.family, plotterFont: options.plotterFont }),
        renderFont,
      )
      apiCommand(
        fonts
          .command('file')
          .summary("upload a font's file")
          .description("upload a font's file, a new version each time: a .ttf, .otf, .woff or .woff2 that writes Spanish (ñ, á, ¿, ¡…)")
          .argument('<account>', 'account id')
          .argument('<name>', "the font's name")
          .argument('<file>', 'the font file, sent as it is (its type is taken from the extension)'),
        async (api, account: string, name: string, file: string) => {
          const font = await readUpload(file, fontExtensions, fontContentTypes, FONT_MAX_BYTES, 'una fuente se sube como TTF, OTF, WOFF o WOFF2')
          return api.upload<AccountFont>(`/admin/accounts/${segment(account)}/fonts/${segment(name)}/file`, font.data, font.contentType)
        },
        renderFont,
      ).addHelpText('after', '\nExample:\n  npm run admin -- fonts file <account> mi-letra MiLetra.woff2')
      apiCommand(
        fonts.command('list').description("an account's fonts, with or without a file").argument('<account>', 'account id'),
        (api, account: string) => api.get<{ data: AccountFont[] }>(`/admin/accounts/${segment(account)}/fonts`),
        (list) =>
          listTable(
            ['name', 'family', 'plotterFont', 'file'],
            list.data.map((font) => [
              font.name,
              font.family,
              font.plotterFont,
              font.file && `v${font.file.version} ${font.file.contentType} ${fileSize(font.file.bytes)}`,
            ]),
          ),
      )
    },
    campaigns: (campaigns: Command) => {
      apiCommand(
        campaigns
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
    },
    letters: (letters: Command) => {
      const dateHelp = 'an ISO 8601 date-time with its offset, e.g. 2026-11-01T00:00:00+01:00 or 2026-11-01T00:00:00Z'
      apiCommand(
        letters
          .command('list')
          .description('letters of every account and both modes, newest first, a page at a time; narrowed by account, mode, status, campaign or creation date')
          .option('--account <account>', 'only the letters of this account (its id)')
          .addOption(new Option('--mode <mode>', 'only live or only test letters').choices(['live', 'test']))
          .option('--status <status>', `only the letters in this status: ${letterStatuses.join(', ')}`, letterStatusOption)
          .option('--campaign <campaign>', 'only the letters of this campaign (its id)')
          .option('--from <date>', `only the letters created at or after this instant: ${dateHelp}`)
          .option('--to <date>', 'only the letters created before this instant')
          .option('--limit <n>', 'letters per page (1-100, default 20)', integer('--limit'))
          .option('--cursor <cursor>', 'the next page, as the previous one said'),
        (api, options: LetterListOptions) => api.get<admin.CardList>(`/admin/cards${letterListQuery(options)}`),
        (page) =>
          page.data.length === 0
            ? 'No hay cartas que mostrar.'
            : listTable(
                ['id', 'accountId', 'mode', 'status', 'recipient', 'campaignId', 'createdAt'],
                page.data.map((letter) => [
                  letter.id,
                  letter.accountId,
                  modeLabel(letter.livemode),
                  letter.status,
                  recipientCell(letter),
                  letter.campaignId,
                  letter.createdAt,
                ]),
              ) + nextPage(page.nextCursor),
      ).addHelpText(
        'after',
        '\nExamples:\n' +
          '  npm run admin -- letters list --account <account> --status failed\n' +
          '  npm run admin -- letters list --campaign <campaign> --from 2026-11-01T00:00:00+01:00 --to 2026-12-01T00:00:00+01:00 --json',
      )
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
          .command('returned')
          .description(
            "record that the post brought a mailed letter back, and why: nothing is refunded, and but for 'refused' its address goes on the account's suppression list",
          )
          .argument('<letter>', 'letter (card) id')
          .addOption(
            new Option('--reason <reason>', `why it came back, as the post marked it: ${returnReasons.map(reasonWithLabel).join(', ')}`)
              .argParser(returnReason)
              .makeOptionMandatory(),
          ),
        (api, id: string, options: { reason: ReturnReason }) =>
          api.post<admin.ReturnedLetter>(`/admin/cards/${segment(id)}/returned`, { reason: options.reason }),
        (returned) => `${renderLetter(returned.card)}\n\n${suppressionNote(returned)}`,
      ).addHelpText(
        'after',
        '\nExamples:\n  npm run admin -- letters returned <letter> --reason bad_address\n  npm run admin -- letters returned <letter> --reason refused',
      )
      apiCommand(
        letters
          .command('stuck')
          .description(
            'letters that need ops: failed, without progress for longer than RECONCILE_AFTER_MS, or waiting since before a restore; longest stuck first',
          )
          .option('--limit <n>', 'letters per page (1-100, default 20)', integer('--limit'))
          .option('--cursor <cursor>', 'the next page, as the previous one said'),
        (api, options: { limit?: number; cursor?: string; json?: boolean }) => api.get<admin.StuckLetterList>(`/admin/stuck-letters${pageQuery(options)}`),
        (page) =>
          page.data.length === 0
            ? 'No hay cartas atascadas.'
            : listTable(
                ['id', 'accountId', 'mode', 'status', 'stuckFor', 'updatedAt'],
                page.data.map((letter) => [
                  letter.id,
                  letter.accountId,
                  modeLabel(letter.livemode),
                  letter.status,
                  age(letter.stuckForSeconds),
                  letter.updatedAt,
                ]),
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
      apiCommand(
        letters
          .command('reconcile')
          .description(
            'after restoring the database: look at every letter waiting for a job now (not after RECONCILE_AFTER_MS); those the print journal has on paper are marked printed, those whose job was lost are queued again',
          ),
        (api) => api.post<admin.Reconciled>('/admin/reconcile'),
        (done) =>
          `Reanudadas: ${done.resumed}. Marcadas como impresas según el diario de impresión: ${done.printedFromJournal}. Cartas que aún necesitan a operaciones: ${done.stuck}.`,
      )
    },
    suppressions: (suppressions: Command) => {
      const modeOption = () => new Option('--mode <mode>', 'the live list (default) or the test one').choices(['live', 'test'])
      apiCommand(
        suppressions
          .command('list')
          .description("an account's suppression list, newest first, a page at a time: postal code and country (the street is kept only as a hash)")
          .argument('<account>', 'account id')
          .addOption(modeOption())
          .option('--limit <n>', 'entries per page (1-100, default 20)', integer('--limit'))
          .option('--cursor <cursor>', 'the next page, as the previous one said'),
        (api, account: string, options: { mode?: Mode; limit?: number; cursor?: string; json?: boolean }) =>
          api.get<{ data: Suppression[]; nextCursor: string | null }>(`/admin/accounts/${segment(account)}/suppressions${pageQuery(options)}`),
        (page) =>
          page.data.length === 0
            ? 'La lista de supresión está vacía.'
            : listTable(
                ['id', 'zip', 'country', 'createdAt', 'reason'],
                page.data.map((entry) => [entry.id, entry.zip, entry.country, entry.createdAt, reasonWithLabel(entry.reason)]),
              ) + nextPage(page.nextCursor),
      ).addHelpText(
        'after',
        '\nExamples:\n  npm run admin -- suppressions list <account>\n  npm run admin -- suppressions list <account> --mode test --limit 50',
      )
      apiCommand(
        suppressions
          .command('lift')
          .description(
            "lift an entry of an account's suppression list: letters to that address are sent again (the API answers no body: --json prints nothing)",
          )
          .argument('<account>', 'account id')
          .argument('<suppression>', 'the entry id, as suppressions list shows it')
          .addOption(modeOption()),
        (api, account: string, suppression: string, options: { mode?: Mode }) =>
          api.delete(`/admin/accounts/${segment(account)}/suppressions/${segment(suppression)}${pageQuery({ mode: options.mode })}`),
        () => 'Entrada quitada de la lista de supresión: las cartas a esa dirección vuelven a enviarse.',
      ).addHelpText('after', '\nExample:\n  npm run admin -- suppressions lift <account> <suppression> --mode test')
    },
  }
  builders[name](group)
}
