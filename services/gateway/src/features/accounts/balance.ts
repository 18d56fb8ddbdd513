import { and, desc, eq, lt } from 'drizzle-orm'
import { stringify } from 'csv-stringify/sync'
import type { Config } from '@letters/config'
import { spreadsheetText, type LedgerKind, type publicApi } from '@letters/contracts'
import { accounts, ledgerEntries, type Executor } from '@letters/db'
import { badRequest } from '../../common/errors.js'

/** Below what ten letters abroad cost, the balance is low: the dashboard asks for a top-up. */
const LOW_BALANCE_LETTERS = 10

export async function accountBalance(ex: Executor, accountId: string, costs: Config['letterCosts']) {
  const [row] = await ex.select({ balance: accounts.balance }).from(accounts).where(eq(accounts.id, accountId))
  const balance = row?.balance ?? 0
  return { balance, lowBalance: balance < LOW_BALANCE_LETTERS * costs.otherwise }
}

const movementColumns = {
  id: ledgerEntries.id,
  createdAt: ledgerEntries.createdAt,
  kind: ledgerEntries.kind,
  amount: ledgerEntries.amount,
  balanceAfter: ledgerEntries.balanceAfter,
  cardId: ledgerEntries.letterId,
  reason: ledgerEntries.reason,
}

/** The ledger's entries are numbered in the order they were written: a page's cursor is the last one's number. */
const movementCursor = (cursor: string) => {
  if (!/^[1-9][0-9]{0,17}$/.test(cursor)) throw badRequest("El parámetro 'cursor' no es válido; usa el 'nextCursor' de la página anterior")
  return Number(cursor)
}

const movement = (row: Awaited<ReturnType<typeof movementRows>>[number]) => ({ ...row, id: String(row.id), createdAt: row.createdAt.toISOString() })

function movementRows(ex: Executor, accountId: string, limit: number, before?: number) {
  return ex
    .select(movementColumns)
    .from(ledgerEntries)
    .where(and(eq(ledgerEntries.accountId, accountId), before === undefined ? undefined : lt(ledgerEntries.id, before)))
    .orderBy(desc(ledgerEntries.id))
    .limit(limit)
}

/** The account's movements of credits, newest first, a page at a time. */
export async function listMovements(ex: Executor, accountId: string, query: publicApi.LedgerMovementQuery) {
  const limit = query.limit ?? 20
  const rows = await movementRows(ex, accountId, limit + 1, query.cursor === undefined ? undefined : movementCursor(query.cursor))
  const page = rows.slice(0, limit)
  return { data: page.map(movement), nextCursor: rows.length > limit ? String(page.at(-1)!.id) : null }
}

/** How many movements the CSV holds at most: a year of a busy account, a file a spreadsheet opens. */
export const MOVEMENTS_CSV_MAX_ROWS = 100_000
const CSV_CHUNK = 5000

const kindNames: Record<LedgerKind, string> = { charge: 'cargo', refund: 'devolución', top_up: 'recarga', adjustment: 'ajuste' }

/**
 * The movements as a CSV for a spreadsheet, newest first: UTF-8 with a byte-order mark (so that a
 * Spanish Excel reads it as UTF-8), CRLF, and any text that Excel would run as a formula
 * neutralised. At most MOVEMENTS_CSV_MAX_ROWS rows, read a chunk at a time.
 */
export async function movementsCsv(ex: Executor, accountId: string): Promise<Buffer> {
  const lines: unknown[][] = [['fecha', 'tipo', 'créditos', 'saldo después', 'carta', 'motivo']]
  let before: number | undefined
  for (let written = 0; written < MOVEMENTS_CSV_MAX_ROWS;) {
    const chunk = Math.min(CSV_CHUNK, MOVEMENTS_CSV_MAX_ROWS - written)
    const rows = await movementRows(ex, accountId, chunk, before)
    for (const row of rows) {
      lines.push([row.createdAt.toISOString(), kindNames[row.kind], row.amount, row.balanceAfter, row.cardId ?? '', spreadsheetText(row.reason ?? '')])
    }
    written += rows.length
    if (rows.length < chunk) break
    before = rows.at(-1)!.id
  }
  return Buffer.from(stringify(lines, { bom: true, record_delimiter: 'windows' }), 'utf8')
}
