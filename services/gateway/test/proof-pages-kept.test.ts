import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect } from 'vitest'
import { eq } from 'drizzle-orm'
import { letters } from '@letters/db'
import { it as base } from '@letters/test/support/fixtures'
import { adminAccount } from '@letters/test/support/accounts'
import { publicClient } from '@letters/test/support/gateway'
import { verifiedAddress } from '@letters/test/support/factories'
import { expectError, sendSingle } from './helpers.js'

/** The test account's design has no printed front: its proof has two pages, the handwriting and the envelope. */
const PAGES = [1, 2]
const LIMIT = PAGES.length
const it = base.extend({ gatewayOptions: { env: { PROOF_RATE_LIMIT_MAX: String(LIMIT), PROOF_RATE_LIMIT_WINDOW_MS: '60000' } } })

const page = (client: ReturnType<typeof publicClient>, id: string, number: number) => client.get(`/cards/${id}/proof.png?page=${number}`)

describe("a final proof's pages", () => {
  it('are kept once drawn and served again without counting against the proofs limit, which still holds for anything drawn', async ({
    gateway: app,
    account,
    client,
  }) => {
    const final = await sendSingle(app, account)
    await app.db.update(letters).set({ status: 'ready_for_print', address: verifiedAddress() }).where(eq(letters.id, final))
    const first = []
    for (const number of PAGES) {
      const response = await page(client, final, number)
      expect(response.statusCode, response.body).toBe(200)
      first.push(response.rawPayload)
    }
    expect((await readdir(join(app.config.artifactsDir, final))).filter((name) => name.endsWith('.png')).sort()).toHaveLength(PAGES.length)

    // The limit is used up, yet the letter's page opens as often as a person looks at it.
    const before = app.renderPool.completed
    for (let round = 0; round < 4; round++) {
      for (const number of PAGES) {
        const response = await page(client, final, number)
        expect(response.statusCode).toBe(200)
        expect(response.rawPayload.equals(first[number - 1]!)).toBe(true)
      }
    }
    expect(app.renderPool.completed).toBe(before)

    // A letter whose proof must be drawn is still limited.
    const fresh = await sendSingle(app, account)
    expectError(await page(client, fresh, 1), 429, 'Too Many Requests', /^Se ha superado el límite de 2 pruebas/)
  })

  it('are never served to another account, kept or not', async ({ gateway: app, account, client }) => {
    const final = await sendSingle(app, account)
    await app.db.update(letters).set({ status: 'ready_for_print', address: verifiedAddress() }).where(eq(letters.id, final))
    expect((await page(client, final, 1)).statusCode).toBe(200)
    const stranger = publicClient(app, (await adminAccount(app, 0)).apiKey)
    for (let i = 0; i < LIMIT + 2; i++) expectError(await page(stranger, final, 1), 404, 'Not Found')
  })

  it('are not kept while the address is not verified: the envelope may still change', async ({ gateway: app, account, client }) => {
    const id = await sendSingle(app, account)
    expect((await page(client, id, 2)).statusCode).toBe(200)
    await expect(readdir(join(app.config.artifactsDir, id))).rejects.toMatchObject({ code: 'ENOENT' })
  })
})
