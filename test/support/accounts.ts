import type { App } from '@letters/gateway/server'
import { ADMIN_TOKEN } from './admin-token.js'

type Inject = Pick<App, 'inject'>

/**
 * The admin API of a gateway in another process, through the same `inject` shape as an
 * in-process app, so that one helper makes accounts in both.
 */
export function overHttp(baseUrl: string): Inject {
  return {
    async inject({ method, url, headers, payload }: { method: string; url: string; headers: Record<string, string>; payload?: object }) {
      const response = await fetch(`${baseUrl}${url}`, {
        method,
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify(payload ?? {}),
      })
      const body = await response.text()
      return { statusCode: response.status, body, json: () => JSON.parse(body) }
    },
  } as unknown as Inject
}

/** The account's name, and the admin token of a gateway not started by the tests (the bench's). */
export interface AccountOptions {
  name?: string
  adminToken?: string
}

/**
 * An account made through the admin API, as ops would: its credits, its API key and one of
 * each named entry a letter needs. `senderName` signs its letters.
 */
export async function adminAccount(app: Inject, credits = 100, senderName = 'Remitente', options: AccountOptions = {}) {
  const { name = 'Cliente de prueba', adminToken = ADMIN_TOKEN } = options
  const post = async (url: string, payload: object) => {
    const response = await app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${adminToken}` }, payload })
    if (response.statusCode !== 201) throw new Error(`POST ${url} answered ${response.statusCode}: ${response.body}`)
    return response.json<{ id: string; apiKey: string; balance: number }>()
  }
  const account = await post('/admin/accounts', { name, credits })
  return {
    ...account,
    cardDesignId: (await post(`/admin/accounts/${account.id}/card-designs`, { name: 'Tarjeta' })).id,
    envelopeDesignId: (await post(`/admin/accounts/${account.id}/envelope-designs`, { name: 'Sobre' })).id,
    senderId: (await post(`/admin/accounts/${account.id}/senders`, { name: senderName })).id,
    signatureId: (await post(`/admin/accounts/${account.id}/signatures`, { name: 'Firma' })).id,
  }
}
