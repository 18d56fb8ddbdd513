import { performance } from 'node:perf_hooks'
import type { BenchAccount } from './accounts.js'
import { median } from './report.js'

export interface BulkLatency {
  recipients: number
  /** Timed requests, after one that is not counted (the first compiles and warms what the rest reuse). */
  runs: number
  p50Ms: number
  maxMs: number
}

/** Recipients of each request: the most one bulk request may carry, the case a client feels most. */
export const BULK_RECIPIENTS = 1000
const TIMED_RUNS = 5

/** A campaign of the account made through the admin API, as ops would: a template with two variables. */
export async function createBulkCampaign(gateway: string, adminToken: string, account: BenchAccount): Promise<string> {
  const response = await fetch(`${gateway}/admin/accounts/${account.id}/campaigns`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      name: 'Campaña de otoño',
      cardDesignId: account.cardDesignId,
      envelopeDesignId: account.envelopeDesignId,
      senderId: account.senderId,
      message:
        'Querida {{nombre}}: gracias por seguir con nosotros este año. Con el código {{cupon}} tienes un 10% en tu próximo pedido. Un abrazo del equipo.',
      variables: [
        { name: 'nombre', maxSize: 60, defaultValue: 'amiga', example: 'Lucía' },
        { name: 'cupon', maxSize: 12, defaultValue: null, example: 'OTONO10' },
      ],
    }),
  })
  if (response.status !== 201) throw new Error(`POST /admin/accounts/${account.id}/campaigns answered ${response.status}: ${await response.text()}`)
  return ((await response.json()) as { id: string }).id
}

/** 1,000 recipients, each with its own name and coupon, Spanish addresses of several provinces. */
function bulkBody(campaignId: string) {
  const cities = [
    { zip: '28013', city: 'Madrid', province: 'Madrid' },
    { zip: '08001', city: 'Barcelona', province: 'Barcelona' },
    { zip: '41004', city: 'Sevilla', province: 'Sevilla' },
    { zip: '46002', city: 'Valencia', province: 'Valencia' },
  ]
  return {
    campaignId,
    recipients: Array.from({ length: BULK_RECIPIENTS }, (_, n) => ({
      name: `Lucía ${n}`,
      surname: 'García Pérez',
      company: n % 3 === 0 ? 'Papelería Luna S.L.' : null,
      address: `Calle Mayor ${n + 1}, 3º B`,
      ...cities[n % cities.length]!,
      country: 'ES',
      variables: { nombre: `Lucía ${n}`, cupon: `OTONO${n}` },
    })),
  }
}

/**
 * One client, one request at a time: the time from sending a 1,000-recipient JSON `POST
 * /cards/bulk` until its whole answer is read, on an otherwise idle gateway. `settle` runs
 * between requests (the gateway's dispatcher moving the previous request's outbox rows), so
 * that one request's aftermath is not timed in the next.
 */
export async function measureBulk(gateway: string, account: BenchAccount, campaignId: string, settle: () => Promise<void>): Promise<BulkLatency> {
  const body = JSON.stringify(bulkBody(campaignId))
  const timings: number[] = []
  for (let run = 0; run <= TIMED_RUNS; run++) {
    const started = performance.now()
    const response = await fetch(`${gateway}/cards/bulk`, {
      method: 'POST',
      headers: { 'x-api-key': account.apiKey, 'content-type': 'application/json' },
      body,
    })
    const answer = await response.text()
    const elapsed = performance.now() - started
    const created = response.status === 200 ? (JSON.parse(answer) as { created: number }).created : undefined
    if (created !== BULK_RECIPIENTS) throw new Error(`POST /cards/bulk answered ${response.status}: ${answer.slice(0, 300)}`)
    if (run > 0) timings.push(elapsed)
    await settle()
  }
  return { recipients: BULK_RECIPIENTS, runs: timings.length, p50Ms: median(timings), maxMs: Math.max(...timings) }
}
