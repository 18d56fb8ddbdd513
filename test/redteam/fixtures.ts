import type { InjectOptions } from 'fastify'
import { buildApp, type App } from '@letters/gateway/app'
import { adminAccount } from '../support/accounts.js'
import { ADMIN_TOKEN, isolatedDatabase, testConfig } from '../support/context.js'

/** A gateway of the red team's own: its database and queue prefix. */
export async function redteamGateway(label: string, env: Record<string, string> = {}) {
  const database = await isolatedDatabase(label)
  const config = testConfig({ DATABASE_URL: database.url, QUEUE_PREFIX: `${testConfig().queuePrefix}-rt-${label}`, ...env })
  const app = await buildApp({ config, logger: false })
  await app.ready()
  return {
    app,
    config,
    async close() {
      await app.close()
      await database.drop()
    },
  }
}

export const recipient = { name: 'Lucía', surname: 'García', address: 'Calle Mayor 1', zip: '28013', city: 'Madrid', province: 'Madrid', country: 'ES' }

/** An account with a live and a test key, and an active campaign (nombre defaulting to "amigo", cupon without default). */
export async function accountWithKeys(app: App, credits = 100) {
  const account = await adminAccount(app, credits)
  const admin = (url: string, payload: object) => app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload })
  const testKey = (await admin(`/admin/accounts/${account.id}/api-keys`, { mode: 'test' })).json<{ apiKey: string }>().apiKey
  const campaign = await admin(`/admin/accounts/${account.id}/campaigns`, {
    name: 'Navidad',
    cardDesignId: account.cardDesignId,
    envelopeDesignId: account.envelopeDesignId,
    senderId: account.senderId,
    fontName: 'dancing-script',
    message: '¡Feliz Navidad, {{nombre}}! Usa {{cupon}} antes del 6 de enero.',
    variables: [
      { name: 'nombre', maxSize: 10, defaultValue: 'amigo', example: 'Lucía' },
      { name: 'cupon', maxSize: 8, defaultValue: null, example: 'NAVIDAD' },
    ],
  })
  if (campaign.statusCode !== 201) throw new Error(campaign.body)
  const campaignId = campaign.json<{ id: string }>().id
  const call =
    (apiKey: string) =>
    (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: InjectOptions['payload'], headers: Record<string, string> = {}) =>
      app.inject({ method, url, headers: { 'x-api-key': apiKey, ...headers }, ...(payload === undefined ? {} : { payload }) })
  return { account, testKey, campaignId, live: call(account.apiKey), test: call(testKey) }
}
