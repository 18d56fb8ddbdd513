import { randomBytes } from 'node:crypto'
import postgres from 'postgres'

/**
 * A login role of its own with a connection limit, on the database at `databaseUrl`: Postgres
 * refuses its connection past the limit with 53300 ("too many connections"), as it refuses
 * everyone's once max_connections is reached. A test fills its slots with `hold`, and frees them.
 */
export interface LimitedRole {
  /** `databaseUrl` as that role. */
  url: string
  /** Opens `count` connections as the role and keeps them; resolves with what closes them. Fails (53300) with none kept when a slot is taken. */
  hold(count: number): Promise<() => Promise<void>>
  /** Ends the role's connections and drops it. */
  drop(): Promise<void>
}

export async function limitedRole(databaseUrl: string, limit: number): Promise<LimitedRole> {
  const name = `letters_budget_${randomBytes(4).toString('hex')}`
  const admin = postgres(databaseUrl, { max: 1, onnotice: () => {} })
  const database = new URL(databaseUrl).pathname.slice(1)
  try {
    await admin`CREATE ROLE ${admin(name)} LOGIN NOSUPERUSER CONNECTION LIMIT ${admin.unsafe(String(limit))}`
    await admin`GRANT ALL ON DATABASE ${admin(database)} TO ${admin(name)}`
    for (const schema of ['public', 'drizzle']) {
      await admin`GRANT ALL ON SCHEMA ${admin(schema)} TO ${admin(name)}`
      await admin`GRANT ALL ON ALL TABLES IN SCHEMA ${admin(schema)} TO ${admin(name)}`
      await admin`GRANT ALL ON ALL SEQUENCES IN SCHEMA ${admin(schema)} TO ${admin(name)}`
      await admin`GRANT ALL ON ALL FUNCTIONS IN SCHEMA ${admin(schema)} TO ${admin(name)}`
    }
  } finally {
    await admin.end()
  }
  const url = new URL(databaseUrl)
  url.username = name
  url.password = ''
  return {
    url: url.toString(),
    async hold(count) {
      const clients = Array.from({ length: count }, () => postgres(url.toString(), { max: 1, idle_timeout: 0, onnotice: () => {} }))
      const release = async () => {
        await Promise.all(clients.map((client) => client.end({ timeout: 1 })))
      }
      // All or none: a slot taken meanwhile by someone else leaves nothing of ours open.
      await Promise.all(clients.map((client) => client`SELECT 1`)).catch(async (error: unknown) => {
        await release()
        throw error
      })
      return release
    },
    async drop() {
      const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} })
      try {
        await sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = ${name}`
        await sql`DROP OWNED BY ${sql(name)}`
        await sql`DROP ROLE IF EXISTS ${sql(name)}`
      } finally {
        await sql.end()
      }
    },
  }
}

/** Ends every connection of the role (a failover, a pooler restart): its pools must open new ones. */
export async function terminateRoleBackends(databaseUrl: string, role: string): Promise<number> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} })
  try {
    const [row] = await sql<Array<{ n: number }>>`SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE usename = ${role}`
    return row?.n ?? 0
  } finally {
    await sql.end()
  }
}
