import { describe, expect, it } from 'vitest'
import postgres from 'postgres'
import { testConfig } from '@letters/test/support/context'
import { dropDatabase, prepareDatabase } from '../src/index.js'

describe('prepareDatabase', () => {
  it('lets several processes start at once on a database that does not exist yet', async () => {
    const url = testConfig().databaseUrl.replace(/\/([^/]*)$/, (_, name: string) => `/${name}_start_${Math.random().toString(36).slice(2, 8)}`)
    try {
      await Promise.all(Array.from({ length: 6 }, () => prepareDatabase(url)))
      const sql = postgres(url, { max: 1 })
      const [row] = await sql<
        Array<{ tables: number }>
      >`SELECT count(*)::int AS tables FROM information_schema.tables WHERE table_name IN ('letters', 'outbox', 'ledger_entries')`
      await sql.end()
      expect(row?.tables).toBe(3)
    } finally {
      await dropDatabase(url)
    }
  })
})
