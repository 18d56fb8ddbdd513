import { describe, expect, it } from 'vitest'
import postgres from 'postgres'
import { testConfig } from '@letters/test/support/context'

/**
 * postgres.js as patched by patches/postgres+3.4.9.patch: a client reads Postgres's array types
 * (a scan of pg_catalog.pg_type) once, not once per connection, and every later connection parses
 * arrays with what that read found. Upstream runs the read on each new connection: in a test run,
 * with its many short-lived pools, it was the query Postgres spent the most CPU on.
 */
const ARRAY_TYPES_QUERY = /from pg_catalog\.pg_type a/

describe('postgres.js array types', () => {
  it('are read by the first connection only, and arrays still parse on every connection', async () => {
    const typeReads: number[] = []
    const sql = postgres(testConfig().databaseUrl, {
      max: 4,
      onnotice: () => {},
      debug: (connection, query) => {
        if (ARRAY_TYPES_QUERY.test(query)) typeReads.push(connection)
      },
    })
    try {
      await sql`SELECT 1`
      // Four at once, each holding its connection a moment: three more connections open.
      const rows = await Promise.all(
        Array.from(
          { length: 4 },
          (_, n) => sql<Array<{ pid: number; tags: string[]; ids: number[] }>>`
          SELECT pg_backend_pid() AS pid, pg_sleep(0.2), ARRAY['a', ${String(n)}]::text[] AS tags, ARRAY[1, ${n}]::int4[] AS ids`,
        ),
      )
      expect(new Set(rows.map(([row]) => row!.pid)).size).toBe(4)
      rows.forEach(([row], n) => {
        expect(row!.tags).toEqual(['a', String(n)])
        expect(row!.ids).toEqual([1, n])
      })
      expect(typeReads).toHaveLength(1)
    } finally {
      await sql.end()
    }
  })

  it('hand a reservation a new connection of a client that has read them, which parses arrays too', async () => {
    const sql = postgres(testConfig().databaseUrl, { max: 2, onnotice: () => {} })
    try {
      const first = await sql.reserve()
      await first`SELECT 1`
      // The second connection opens for this reservation, without reading the types again.
      const second = await Promise.race([
        sql.reserve(),
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the reservation of a new connection was never handed over')), 10_000)),
      ])
      const [row] = await second<Array<{ tags: string[] }>>`SELECT ARRAY['x', 'y']::text[] AS tags`
      expect(row!.tags).toEqual(['x', 'y'])
      second.release()
      first.release()
    } finally {
      await sql.end()
    }
  })
})
