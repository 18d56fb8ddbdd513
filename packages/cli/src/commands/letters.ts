import { type Command, InvalidArgumentError, Option } from 'commander'
import {
  letterStatusNames,
  letterStatuses,
  modeLabel,
  returnReasons,
  type LetterStatus,
  type Mode,
  type ReturnReason,
  type admin,
  type publicApi,
} from '@letters/contracts'
import { segment } from '../admin-api.js'
import { age, listTable, recordTable, type Cell } from '../output.js'
import { apiCommand, nextPage, pageQuery, readPaging, reasonWithLabel, withPagingOptions, type GroupContext, type PagingOptions } from './shared.js'

type Letter = (admin.Card | publicApi.Card) & { accountId?: string }

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
interface LetterListOptions extends PagingOptions {
  account?: string
  mode?: Mode
  status?: LetterStatus
  campaign?: string
  from?: string
  to?: string
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
  readPaging(options, query)
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

/** The commands of `letters`. */
export function addCommands(letters: Command, context: GroupContext): void {
  const dateHelp = 'an ISO 8601 date-time with its offset, e.g. 2026-11-01T00:00:00+01:00 or 2026-11-01T00:00:00Z'
  apiCommand(
    context,
    withPagingOptions(
      letters
        .command('list')
        .description('letters of every account and both modes, newest first, a page at a time; narrowed by account, mode, status, campaign or creation date')
        .option('--account <account>', 'only the letters of this account (its id)')
        .addOption(new Option('--mode <mode>', 'only live or only test letters').choices(['live', 'test']))
        .option('--status <status>', `only the letters in this status: ${letterStatuses.join(', ')}`, letterStatusOption)
        .option('--campaign <campaign>', 'only the letters of this campaign (its id)')
        .option('--from <date>', `only the letters created at or after this instant: ${dateHelp}`)
        .option('--to <date>', 'only the letters created before this instant'),
      'letters',
    ),
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
    context,
    letters.command('show').description('a letter of any account, with its history').argument('<letter>', 'letter (card) id'),
    (api, id: string) => api.get<admin.Card>(`/admin/cards/${segment(id)}`),
    renderLetter,
  )
  apiCommand(
    context,
    letters.command('mailed').description('record that a printed letter was handed to the post').argument('<letter>', 'letter (card) id'),
    (api, id: string) => api.post<publicApi.Card>(`/admin/cards/${segment(id)}/mailed`),
    renderLetter,
  )
  apiCommand(
    context,
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
    (api, id: string, options: { reason: ReturnReason }) => api.post<admin.ReturnedLetter>(`/admin/cards/${segment(id)}/returned`, { reason: options.reason }),
    (returned) => `${renderLetter(returned.card)}\n\n${suppressionNote(returned)}`,
  ).addHelpText(
    'after',
    '\nExamples:\n  npm run admin -- letters returned <letter> --reason bad_address\n  npm run admin -- letters returned <letter> --reason refused',
  )
  apiCommand(
    context,
    withPagingOptions(
      letters
        .command('stuck')
        .description(
          'letters that need ops: failed, without progress for longer than RECONCILE_AFTER_MS, or waiting since before a restore; longest stuck first',
        ),
      'letters',
    ),
    (api, options: PagingOptions & { json?: boolean }) => api.get<admin.StuckLetterList>(`/admin/stuck-letters${pageQuery(options)}`),
    (page) =>
      page.data.length === 0
        ? 'No hay cartas atascadas.'
        : listTable(
            ['id', 'accountId', 'mode', 'status', 'stuckFor', 'updatedAt'],
            page.data.map((letter) => [letter.id, letter.accountId, modeLabel(letter.livemode), letter.status, age(letter.stuckForSeconds), letter.updatedAt]),
          ) + nextPage(page.nextCursor),
  )
  apiCommand(
    context,
    letters
      .command('retry')
      .description('send a failed letter back to production, or resume a stuck one; safe to repeat (a letter is printed once)')
      .argument('<letter>', 'letter (card) id'),
    (api, id: string) => api.post<admin.Card>(`/admin/cards/${segment(id)}/retry`),
    renderLetter,
  )
  apiCommand(
    context,
    letters
      .command('reconcile')
      .description(
        'after restoring the database: look at every letter waiting for a job now (not after RECONCILE_AFTER_MS); those the print journal has on paper are marked printed, those whose job was lost are queued again',
      ),
    (api) => api.post<admin.Reconciled>('/admin/reconcile'),
    (done) =>
      `Reanudadas: ${done.resumed}. Marcadas como impresas según el diario de impresión: ${done.printedFromJournal}. Cartas que aún necesitan a operaciones: ${done.stuck}.`,
  )
}
