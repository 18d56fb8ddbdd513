import { SENDER_NAME } from './letter.js'

/** An account made through the admin API, as ops (and test/support/accounts.ts) make one: credits, a key, one of each entry a letter needs. */
export interface BenchAccount {
  id: string
  apiKey: string
  cardDesignId: string
  envelopeDesignId: string
  senderId: string
}

/** The most credits the admin API grants at once: plenty for a few seconds of letters. */
export const OPENING_CREDITS = 10_000_000

export async function createAccount(gateway: string, adminToken: string, name: string): Promise<BenchAccount> {
  const post = async (path: string, body: object) => {
    const response = await fetch(`${gateway}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    if (response.status !== 201) throw new Error(`POST ${path} answered ${response.status}: ${await response.text()}`)
    return (await response.json()) as { id: string; apiKey: string }
  }
  const account = await post('/admin/accounts', { name, credits: OPENING_CREDITS })
  const entry = async (kind: string, entryName: string) => (await post(`/admin/accounts/${account.id}/${kind}`, { name: entryName })).id
  return {
    id: account.id,
    apiKey: account.apiKey,
    cardDesignId: await entry('card-designs', 'Tarjeta'),
    envelopeDesignId: await entry('envelope-designs', 'Sobre'),
    senderId: await entry('senders', SENDER_NAME),
  }
}
