import { asc, eq, sql } from 'drizzle-orm'
import { cardDesigns, envelopeDesigns, senders, signatures, type Db } from '@letters/db'

/** The four kinds of named entry an account owns, by the path segment that names them. */
export const companyTables = {
  'card-designs': cardDesigns,
  'envelope-designs': envelopeDesigns,
  senders,
  signatures,
} as const
export type CompanyKind = keyof typeof companyTables

function listQuery(db: Db, kind: CompanyKind) {
  const table = companyTables[kind]
  return db
    .select({ id: table.id, name: table.name })
    .from(table)
    .where(eq(table.accountId, sql.placeholder('accountId')))
    .orderBy(asc(table.createdAt), asc(table.id))
    .prepare(`list_${kind.replace('-', '_')}`)
}

/**
 * Each pool's list queries, built once: drizzle's query builder took a tenth of a list read's
 * CPU time when it ran for every request.
 */
const listQueries = new WeakMap<Db, Map<CompanyKind, ReturnType<typeof listQuery>>>()

/** The account's entries of one kind, oldest first. */
export function listEntries(db: Db, kind: CompanyKind, accountId: string) {
  let queries = listQueries.get(db)
  if (!queries) listQueries.set(db, (queries = new Map()))
  let query = queries.get(kind)
  if (!query) queries.set(kind, (query = listQuery(db, kind)))
  return query.execute({ accountId })
}
