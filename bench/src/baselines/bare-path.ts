/**
 * Baseline: the naive way to write POST /single, the floor every gateway figure is measured against.
 * Fastify and postgres.js, one transaction (conditional debit, letter insert, ledger insert),
 * then one BullMQ add; no validation, no auth (the account id comes in the body), no
 * idempotency, no outbox. Same tables, same pool size (10) and same Redis as the gateway, so the
 * ratio shows what the service's guarantees cost. Kept as written so that runs stay comparable.
 */
import { randomUUID } from 'node:crypto'
import { Queue } from 'bullmq'
import Fastify from 'fastify'
import { Redis } from 'ioredis'
import postgres from 'postgres'
import { loadConfigOrExit } from '@letters/config'

const config = loadConfigOrExit()
const sql = postgres(config.databaseUrl, { max: 10, onnotice: () => {} })
// A queue of its own: nothing consumes it, and its keys go with the run's prefix.
const queue = new Queue('bare-address', { connection: new Redis(config.redisUrl, { maxRetriesPerRequest: null }), prefix: config.queuePrefix })

interface BareLetter {
  accountId: string
  cardDesignId: string
  envelopeDesignId: string
  senderId: string
  fontName?: string
  message?: string
  name: string
  surname: string
  company?: string
  address: string
  zip: string
  city: string
  province?: string
  country: string
}

const app = Fastify()
app.get('/healthz', async () => ({ ok: true }))
app.post('/single', async (request, reply) => {
  const letter = request.body as BareLetter
  const id = randomUUID()
  const cost = config.letterCosts.byCountry[letter.country] ?? config.letterCosts.otherwise
  const recipient = {
    name: letter.name,
    surname: letter.surname,
    company: letter.company ?? null,
    address: letter.address,
    zip: letter.zip,
    city: letter.city,
    province: letter.province ?? null,
    country: letter.country,
  }
  const stored = await sql.begin(async (tx) => {
    const [debited] = await tx`UPDATE accounts SET balance = balance - ${cost} WHERE id = ${letter.accountId} AND balance >= ${cost} RETURNING balance`
    if (!debited) return false
    await tx`
      INSERT INTO letters (id, account_id, type, card_design_id, envelope_design_id, sender_id, font_name, message, recipient, status, cost)
      VALUES (${id}, ${letter.accountId}, 'single', ${letter.cardDesignId}, ${letter.envelopeDesignId}, ${letter.senderId},
        ${letter.fontName ?? 'caveat'}, ${letter.message ?? ''}, ${tx.json(recipient)}, 'received', ${cost})`
    await tx`
      INSERT INTO ledger_entries (account_id, kind, amount, balance_after, letter_id)
      VALUES (${letter.accountId}, 'charge', ${-cost}, ${debited.balance as number}, ${id})`
    return true
  })
  if (!stored) return reply.code(402).send({ error: 'Payment Required' })
  await queue.add('normalize-address', { letterId: id })
  return { success: true, cardId: id }
})
await app.listen({ host: config.host, port: config.port })
