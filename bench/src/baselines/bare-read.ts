/**
 * Baseline: the naive way to write the list GETs, which shows the ceiling of a read that asks
 * Postgres on every request. Fastify and postgres.js, one query, the rows sent as they come; no
 * auth (the account id comes in the X-Account-Id header), no rate limit, no security headers,
 * no metrics, no response schema. Same tables and pool size (10) as the gateway. Kept as written
 * so that runs stay comparable.
 */
import Fastify from 'fastify'
import postgres from 'postgres'
import { loadConfigOrExit } from '@letters/config'

const config = loadConfigOrExit()
const sql = postgres(config.databaseUrl, { max: 10, onnotice: () => {} })

const app = Fastify()
app.get('/healthz', async () => ({ ok: true }))
app.get('/card-designs', async (request) => {
  const accountId = request.headers['x-account-id'] as string
  return { data: await sql`SELECT id, name FROM card_designs WHERE account_id = ${accountId} ORDER BY created_at, id` }
})
app.get('/cards', async (request) => {
  const accountId = request.headers['x-account-id'] as string
  const limit = Number((request.query as { limit?: string }).limit ?? 20)
  const rows = await sql`
    SELECT id, type, status, campaign_id, card_design_id, envelope_design_id, sender_id, font_name, message, recipient, address, cost, created_at, updated_at
    FROM letters WHERE account_id = ${accountId} ORDER BY created_at DESC NULLS LAST, id DESC NULLS LAST LIMIT ${limit + 1}`
  return { data: rows.slice(0, limit), more: rows.length > limit }
})
await app.listen({ host: config.host, port: config.port })
