import { sql, type SQL } from 'drizzle-orm'

/**
 * Our own constants as SQL literals, for what must hold literals: a partial index, a CHECK
 * constraint, and a query's condition the planner must match to a partial index's predicate
 * (it proves one only from constants it sees: with parameters, once a prepared statement's plan
 * is generic, it reads the whole table instead).
 */
export function literalList(values: readonly string[]): string {
  return values.map((value) => `'${value.replaceAll("'", "''")}'`).join(', ')
}

/** The same as SQL in parentheses, for `IN`: the one way a list of statuses is written into a query. */
export const literalListSql = (values: readonly string[]): SQL => sql.raw(`(${literalList(values)})`)

/** One constant as an SQL literal, for a condition that must read as a partial index's predicate does. */
export const literalSql = (value: string): SQL => sql.raw(literalList([value]))
