import type { App } from '@letters/gateway/app'
import { ADMIN_TOKEN } from './context.js'

/**
 * An account made through the admin API, as ops would: its credits, its API key and one of
 * each named entry a letter needs. `senderName` signs its letters.
 */
export async function adminAccount(app: Pick<App, 'inject'>, credits = 100, senderName = 'Remitente') {
  const post = async (url: string, payload: object) => {
    const response = await app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload })
    if (response.statusCode !== 201) throw new Error(`POST ${url} answered ${response.statusCode}: ${response.body}`)
    return response.json<{ id: string; apiKey: string; balance: number }>()
  }
  const account = await post('/admin/accounts', { name: 'Cliente de prueba', credits })
  return {
    ...account,
    cardDesignId: (await post(`/admin/accounts/${account.id}/card-designs`, { name: 'Tarjeta' })).id,
    envelopeDesignId: (await post(`/admin/accounts/${account.id}/envelope-designs`, { name: 'Sobre' })).id,
    senderId: (await post(`/admin/accounts/${account.id}/senders`, { name: senderName })).id,
    signatureId: (await post(`/admin/accounts/${account.id}/signatures`, { name: 'Firma' })).id,
  }
}
