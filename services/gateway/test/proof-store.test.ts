import { readFile, readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect } from 'vitest'
import { eq } from 'drizzle-orm'
import { letters } from '@letters/db'
import { DRAWING_REVISION, PROOF_REVISION } from '@letters/render'
import { proofKey } from '../src/features/letters/proofs.js'
import { sendSingle } from './helpers.js'
import { it as base } from '@letters/test/support/fixtures'
import type { PublicClient } from '@letters/test/support/gateway'
import { verifiedAddress } from '@letters/test/support/factories'

const verified = verifiedAddress()

const it = base.extend({ gatewayOptions: { env: { PROOF_RATE_LIMIT_MAX: '1000' } } })

const proof = (client: PublicClient, id: string) => client.get(`/cards/${id}/proof`)

describe('proofs kept in the artifact store', () => {
  it('draws the proof of a verified letter once, keeps it, and serves the same bytes from the store afterwards', async ({ gateway: app, account, client }) => {
    const id = await sendSingle(app, account)
    await app.db.update(letters).set({ status: 'ready_for_print', address: verified }).where(eq(letters.id, id))

    const before = app.renderPool.completed
    const first = await proof(client, id)
    expect(first.statusCode).toBe(200)
    expect(app.renderPool.completed).toBe(before + 1)
    const kept = await readFile(join(app.config.artifactsDir, proofKey(id)))
    expect(kept.equals(first.rawPayload)).toBe(true)

    const again = await Promise.all([proof(client, id), proof(client, id), proof(client, id)])
    for (const response of again) {
      expect(response.statusCode).toBe(200)
      expect(response.headers['content-type']).toBe('application/pdf')
      expect(response.rawPayload.equals(first.rawPayload)).toBe(true)
    }
    // No render happened for them: the pool finished no other task.
    expect(app.renderPool.completed).toBe(before + 1)
  })

  it('draws again a proof kept by a renderer whose proofs showed less (its name without PROOF_REVISION), and keeps the new one', async ({
    gateway: app,
    account,
    client,
  }) => {
    const id = await sendSingle(app, account)
    await app.db.update(letters).set({ status: 'ready_for_print', address: verified }).where(eq(letters.id, id))
    // The name a final proof was kept under before a preprinted card's proof showed its front.
    await app.artifacts.put(`${id}/proof-r${DRAWING_REVISION}.pdf`, Buffer.from('%PDF-1.3 a proof drawn by the previous renderer'))

    const before = app.renderPool.completed
    const drawn = await proof(client, id)
    expect(drawn.statusCode).toBe(200)
    expect(drawn.rawPayload.toString('latin1')).not.toContain('the previous renderer')
    expect(app.renderPool.completed).toBe(before + 1)
    expect(proofKey(id)).toBe(`${id}/proof-r${DRAWING_REVISION}.${PROOF_REVISION}.pdf`)
    expect((await readFile(join(app.config.artifactsDir, proofKey(id)))).equals(drawn.rawPayload)).toBe(true)
  })

  it('keeps nothing while the address is not verified: the envelope may still change', async ({ gateway: app, account, client }) => {
    const id = await sendSingle(app, account)
    const before = app.renderPool.completed
    expect((await proof(client, id)).statusCode).toBe(200)
    expect((await proof(client, id)).statusCode).toBe(200)
    expect(app.renderPool.completed).toBe(before + 2)
    await expect(readdir(join(app.config.artifactsDir, id))).rejects.toMatchObject({ code: 'ENOENT' })
  })
})
