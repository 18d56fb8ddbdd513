import { drizzle, type PostgresJsDatabase } from 'drizzle-orm/postgres-js'
import postgres from 'postgres'
import * as schema from './schema.js'

export type Db = PostgresJsDatabase<typeof schema> & { $client: postgres.Sql }
export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0]
/** Repositories and the ledger take either the pool or an open transaction. */
export type Executor = Db | Tx

export interface DbOptions {
  /** Connections in the pool. */
  max?: number
  /** Longest a statement may run before Postgres cancels it. */
  statementTimeoutMs?: number
}

export function createDb(url: string, options: DbOptions = {}): Db {
  const client = postgres(url, {
    max: options.max ?? 10,
    onnotice: () => {},
    connection: {
      // A stuck statement fails instead of holding locks and a connection indefinitely.
      statement_timeout: options.statementTimeoutMs ?? 10_000,
      // A process that died mid-transaction (a crash, a SIGKILL) loses its locks within a second,
      // even while its statement waits for a lock: an Idempotency-Key it held is free again.
      client_connection_check_interval: 1000,
    },
  })
  return drizzle(client, { schema })
}

/** The statement timeout every connection of the pool starts with (ms), if it sets one. */
export function connectionStatementTimeoutMs(db: Db): number | undefined {
  const value = db.$client.options.connection?.statement_timeout
  return value === undefined ? undefined : Number(value)
}

export async function closeDb(db: Db): Promise<void> {
  await db.$client.end({ timeout: 5 })
}
