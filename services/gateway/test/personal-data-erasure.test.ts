import { randomUUID } from 'node:crypto'
import { access } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect } from 'vitest'
import { eq, inArray } from 'drizzle-orm'
import { idempotencyKeys, ledgerEntries } from '@letters/db'
import { adminCampaign } from '@letters/test/support/gateway'
import { it as base } from '@letters/test/support/fixtures'
import { reachStatus, silentLog, type Pipeline } from '@letters/test/support/pipeline'
import { PersonalDataEraser } from '../src/features/personal-data/personal-data.js'
import { databaseDump, found, redisDump } from '@letters/test/support/personal-data-traces'

/**
 * The whole pipeline on a database and queue prefix of its own, with a retention of six seconds:
 * letters are made, printed and mailed as a client's are, then erased (by the eraser, or on
 * request), and a pg_dump of the database and every Redis key of the pipeline's prefix are
 * searched for what was erased.
 */
const RETENTION_MS = 6000
const it = base.extend({ pipelineOptions: { label: 'erasure', env: { PERSONAL_DATA_RETENTION_MS: String(RETENTION_MS) } } })

/** A public address given as an IP literal: no DNS is asked, and no webhook worker runs here, so nothing is sent. */
const WEBHOOK_URL = 'https://93.184.216.34/hooks/letters'
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/

type Card = {
  id: string
  status: string
  message: string
  cost: number
  recipient: Record<string, unknown>
  address: Record<string, unknown> | null
  addressLines: string[] | null
  createdAt: string
  updatedAt: string
  personalDataErasedAt: string | null
  events: Array<{ status: string; at: string; detail: string | null }>
}

/** A recipient whose every field is a word found nowhere else: what the dump is searched for. */
function recipient(name: string, surname: string, street: string) {
  return { name, surname, address: street, zip: '28013', city: 'Madrid', province: 'Madrid', country: 'ES' }
}

const send = async (pipeline: Pipeline, path: '/single' | '/card', body: object, idempotencyKey?: string) => {
  const response = await pipeline.app.inject({
    method: 'POST',
    url: path,
    headers: { 'x-api-key': pipeline.account.apiKey, ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}) },
    payload: body,
  })
  expect(response.statusCode, response.body).toBe(200)
  return response.json<{ cardId: string }>().cardId
}

const single = (pipeline: Pipeline, fields: object, idempotencyKey?: string) =>
  send(
    pipeline,
    '/single',
    { cardDesignId: pipeline.account.cardDesignId, envelopeDesignId: pipeline.account.envelopeDesignId, senderId: pipeline.account.senderId, ...fields },
    idempotencyKey,
  )

const cardOf = async (pipeline: Pipeline, id: string) => {
  const response = await pipeline.client('GET', `/cards/${id}`)
  expect(response.statusCode, response.body).toBe(200)
  return response.json<Card>()
}

const inArtifacts = (pipeline: Pipeline, id: string) =>
  access(join(pipeline.config.artifactsDir, id)).then(
    () => true,
    () => false,
  )

/** Every trace of `values` left in the pipeline's database and in its Redis keys. */
async function traces(pipeline: Pipeline, values: string[]) {
  return {
    postgres: found(await databaseDump(pipeline.config.databaseUrl), values),
    redis: found(await redisDump(pipeline.config.redisUrl, pipeline.config.queuePrefix), values),
  }
}

/** What an erased letter keeps: everything but its personal data, as it was. */
function expectErased(after: Card, before: Card) {
  expect(after.personalDataErasedAt).toMatch(ISO)
  expect(after).toMatchObject({
    id: before.id,
    status: before.status,
    cost: before.cost,
    createdAt: before.createdAt,
    updatedAt: before.updatedAt,
    message: '',
    recipient: { name: '', surname: '', company: null, address: '', zip: '', city: '', province: null, country: 'ES' },
    addressLines: null,
  })
  expect(after.events.map(({ status, at }) => ({ status, at }))).toEqual(before.events.map(({ status, at }) => ({ status, at })))
  if (before.address) {
    expect(after.address).toMatchObject({ country: 'ES', countryName: before.address.countryName, deliverability: before.address.deliverability })
    expect(after.address).toMatchObject({ name: '', surname: '', address: '', zip: '', city: '', changes: [], problems: [] })
  }
}

/** The pipeline's eraser, run every 200 ms with the pipeline's retention; stop it when done. */
function startEraser(pipeline: Pipeline) {
  const eraser = new PersonalDataEraser(
    { db: pipeline.app.db, artifacts: pipeline.app.artifacts, log: silentLog },
    { retentionMs: pipeline.config.personalDataRetentionMs, intervalMs: 200 },
  )
  eraser.start()
  return eraser
}

describe('DELETE /cards/{cardId}/personal-data on a printed letter', () => {
  it('erases its recipient, message, proof and files from the database, the artifact store and Redis at once, keeping its status, history and charge', async ({
    pipeline,
  }) => {
    const endpoint = await pipeline.client('POST', '/webhooks', { url: WEBHOOK_URL })
    expect(endpoint.statusCode, endpoint.body).toBe(201)
    const key = randomUUID()
    const body = { ...recipient('Dorotea', 'Quintanilla', 'Calle del Dragón Azul 11'), message: 'Dorotea, el paquete secreto llega el jueves' }
    const id = await single(pipeline, body, key)
    await reachStatus(pipeline, id, 'printed', 30_000)
    const proof = await pipeline.client('GET', `/cards/${id}/proof`)
    expect(proof.statusCode, proof.body).toBe(200)
    const before = await cardOf(pipeline, id)
    const balance = await pipeline.balance()
    const erasedValues = ['Dorotea', 'Quintanilla', 'Calle del Dragón Azul', 'paquete secreto']
    // The search finds them while they are there, and Redis holds the letter's jobs (by id only).
    expect((await traces(pipeline, erasedValues)).postgres).toEqual(erasedValues)
    expect(await redisDump(pipeline.config.redisUrl, pipeline.config.queuePrefix)).toContain(id)
    expect(await inArtifacts(pipeline, id)).toBe(true)

    const erased = await pipeline.client('DELETE', `/cards/${id}/personal-data`)
    expect(erased.statusCode, erased.body).toBe(204)
    expect(erased.body).toBe('')

    expectErased(await cardOf(pipeline, id), before)
    expect(await traces(pipeline, erasedValues)).toEqual({ postgres: [], redis: [] })
    expect(await inArtifacts(pipeline, id)).toBe(false)
    expect((await pipeline.client('GET', `/cards/${id}/proof`)).statusCode).toBe(410)
    expect(await pipeline.balance()).toBe(balance)
    const charges = await pipeline.app.db.select().from(ledgerEntries).where(eq(ledgerEntries.letterId, id))
    expect(charges.map((entry) => [entry.kind, entry.amount])).toEqual([['charge', -3]])

    // Again: nothing more to erase, still 204. The creation's key no longer matches its request
    // (its hash was of the recipient): a replay is refused, never a second letter.
    expect((await pipeline.client('DELETE', `/cards/${id}/personal-data`)).statusCode).toBe(204)
    const [stored] = await pipeline.app.db.select().from(idempotencyKeys).where(eq(idempotencyKeys.key, key))
    expect(stored?.requestHash).toBe('erased')
    const replay = await pipeline.app.inject({
      method: 'POST',
      url: '/single',
      headers: { 'x-api-key': pipeline.account.apiKey, 'idempotency-key': key },
      payload: {
        cardDesignId: pipeline.account.cardDesignId,
        envelopeDesignId: pipeline.account.envelopeDesignId,
        senderId: pipeline.account.senderId,
        ...body,
      },
    })
    expect(replay.statusCode, replay.body).toBe(422)
    expect(await pipeline.balance()).toBe(balance)
  })
})

describe('the personal data eraser', () => {
  it('erases the letters printed, mailed or cancelled longer ago than PERSONAL_DATA_RETENTION_MS, everywhere, and leaves younger and unfinished ones alone', async ({
    pipeline,
  }) => {
    const endpoint = await pipeline.client('POST', '/webhooks', { url: WEBHOOK_URL })
    expect(endpoint.statusCode, endpoint.body).toBe(201)
    const campaignId = await adminCampaign(pipeline.app, pipeline.account)
    const inOneHour = new Date(Date.now() + 3_600_000).toISOString()

    const printed = await single(
      pipeline,
      { ...recipient('Eulalia', 'Zubizarreta', 'Calle Xilófono Verde 77'), message: 'Eulalia, la llave está bajo la maceta' },
      randomUUID(),
    )
    const mailed = await send(pipeline, '/card', {
      campaignId,
      ...recipient('Anacleta', 'Berenguela', 'Avenida de los Olmos Tristes 5'),
      variables: { nombre: 'Telesforo', cupon: 'CUPONALFA9' },
    })
    const cancelled = await single(pipeline, {
      ...recipient('Casimiro', 'Villaescusa', 'Plaza del Relojero Mudo 3'),
      message: 'Casimiro, nunca llegó',
      sendAt: inOneHour,
    })
    const scheduled = await single(pipeline, {
      ...recipient('Sinforosa', 'Arrabalde', 'Calle del Molino Lento 9'),
      message: 'Sinforosa, hasta el año que viene',
      sendAt: inOneHour,
    })
    expect((await pipeline.client('DELETE', `/cards/${cancelled}`)).statusCode).toBe(200)
    await reachStatus(pipeline, printed, 'printed', 30_000)
    await reachStatus(pipeline, mailed, 'printed', 30_000)
    expect((await pipeline.admin('POST', `/admin/cards/${mailed}/mailed`)).statusCode).toBe(200)
    const before = new Map(await Promise.all([printed, mailed, cancelled].map(async (id) => [id, await cardOf(pipeline, id)] as const)))
    const erasedValues = [
      ...['Eulalia', 'Zubizarreta', 'Calle Xilófono Verde', 'llave está bajo la maceta'],
      ...['Anacleta', 'Berenguela', 'Avenida de los Olmos Tristes', 'Telesforo', 'CUPONALFA9'],
      ...['Casimiro', 'Villaescusa', 'Plaza del Relojero Mudo', 'nunca llegó'],
    ]
    expect((await traces(pipeline, erasedValues)).postgres).toEqual(erasedValues)

    const eraser = startEraser(pipeline)
    try {
      await expect
        .poll(async () => Promise.all([printed, mailed, cancelled].map(async (id) => (await cardOf(pipeline, id)).personalDataErasedAt !== null)), {
          timeout: 30_000,
          interval: 250,
        })
        .toEqual([true, true, true])
      // A letter printed now is younger than the retention: the eraser, still running, leaves it.
      const young = await single(pipeline, { ...recipient('Yolanda', 'Peñalba', 'Calle de la Yedra Alta 2'), message: 'Yolanda, bienvenida' })
      await reachStatus(pipeline, young, 'printed', 30_000)
      await new Promise((resolve) => setTimeout(resolve, 1000))
      for (const id of [young, scheduled]) expect((await cardOf(pipeline, id)).personalDataErasedAt).toBeNull()
      expect(await inArtifacts(pipeline, young)).toBe(true)

      for (const [id, card] of before) expectErased(await cardOf(pipeline, id), card)
      expect(await traces(pipeline, erasedValues)).toEqual({ postgres: [], redis: [] })
      for (const id of [printed, mailed]) expect(await inArtifacts(pipeline, id)).toBe(false)
      // What the eraser left is still there, and the search finds it.
      const kept = ['Yolanda', 'Peñalba', 'Sinforosa', 'Arrabalde', 'hasta el año que viene']
      expect((await traces(pipeline, kept)).postgres).toEqual(kept)
      expect((await cardOf(pipeline, scheduled)).status).toBe('scheduled')
      const hashes = await pipeline.app.db
        .select({ requestHash: idempotencyKeys.requestHash })
        .from(idempotencyKeys)
        .where(inArray(idempotencyKeys.accountId, [pipeline.account.id]))
      expect(hashes.map((row) => row.requestHash)).toContain('erased')
    } finally {
      await eraser.stop()
    }
  })

  it('erases a letter returned longer ago than PERSONAL_DATA_RETENTION_MS like any final one, its address still refused by the suppression list', async ({
    pipeline,
  }) => {
    const street = recipient('Ermenegilda', 'Sotomonte', 'Callejón del Cartero Perdido 4')
    const id = await single(pipeline, { ...street, message: 'Ermenegilda, te esperamos en la tienda' })
    await reachStatus(pipeline, id, 'printed', 30_000)
    expect((await pipeline.admin('POST', `/admin/cards/${id}/mailed`)).statusCode).toBe(200)
    const returned = await pipeline.admin('POST', `/admin/cards/${id}/returned`, { reason: 'bad_address' })
    expect(returned.statusCode, returned.body).toBe(200)
    const { suppressionId } = returned.json<{ suppressionId: string }>()
    expect(suppressionId).toEqual(expect.any(String))
    const before = await cardOf(pipeline, id)
    expect(before.status).toBe('returned')
    const erasedValues = ['Ermenegilda', 'Sotomonte', 'Cartero Perdido', 'te esperamos en la tienda']
    expect((await traces(pipeline, erasedValues)).postgres).toEqual(erasedValues)
    expect(await inArtifacts(pipeline, id)).toBe(true)

    const eraser = startEraser(pipeline)
    try {
      await expect
        .poll(async () => [(await cardOf(pipeline, id)).personalDataErasedAt !== null, await inArtifacts(pipeline, id)], { timeout: 30_000, interval: 250 })
        .toEqual([true, false])
    } finally {
      await eraser.stop()
    }
    const after = await cardOf(pipeline, id)
    expectErased(after, before)
    // Not before its return was older than the retention.
    expect(Date.parse(after.personalDataErasedAt!) - Date.parse(before.updatedAt)).toBeGreaterThanOrEqual(RETENTION_MS)
    expect(after).toMatchObject({ status: 'returned', returnReason: 'bad_address' })
    expect(await traces(pipeline, erasedValues)).toEqual({ postgres: [], redis: [] })

    // The address's entry stays, without the street, and still refuses the next letter to it.
    const listed = await pipeline.client('GET', '/suppressions')
    expect(listed.json<{ data: Array<{ id: string }> }>().data.map((entry) => entry.id)).toContain(suppressionId)
    const again = await pipeline.app.inject({
      method: 'POST',
      url: '/single',
      headers: { 'x-api-key': pipeline.account.apiKey },
      payload: {
        cardDesignId: pipeline.account.cardDesignId,
        envelopeDesignId: pipeline.account.envelopeDesignId,
        senderId: pipeline.account.senderId,
        ...street,
        message: 'Otra vez',
      },
    })
    expect(again.statusCode, again.body).toBe(400)
    expect(again.json<{ message: string }>().message).toMatch(/como dirección incorrecta/)
  }, 90_000)
})
