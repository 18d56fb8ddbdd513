// The PDF bomb of artwork-costs-bounded.test.ts against a gateway process with the production
// settings, while a client keeps calling it: a latency claim (every answer under a second), so it
// runs with the other timed files, alone, where the machine's load is the service's own.
import { describe, expect } from 'vitest'
import { it as base } from '@letters/test/support/fixtures'
import { adminAccount, overHttp } from '@letters/test/support/accounts'
import { ADMIN_TOKEN } from '@letters/test/support/context'
import { freePort, startGatewayProcess } from '@letters/test/support/processes'
import { objectStreamBombPdf } from '@letters/test/support/hostile-artwork'

const it = base.extend({ gatewayOptions: { isolate: 'rt-artwork-process' } })

describe('a PDF bomb sent to a gateway process with the production settings', () => {
  // EVENT_LOOP_MAX_DELAY_MS keeps its default (1000): after the stall the gateway sheds load.
  it('keeps answering a client’s requests (200, under a second) while a 0.3 MB PDF is refused', async ({ gateway }) => {
    const config = gateway.config
    const port = await freePort()
    const started = await startGatewayProcess(config, port, { EVENT_LOOP_MAX_DELAY_MS: '1000' })
    try {
      const base = `http://127.0.0.1:${port}`
      const account = await adminAccount(overHttp(base), 10)
      let done = false
      const answers: Array<{ status: number; ms: number }> = []
      const polling = (async () => {
        while (!done) {
          const sent = Date.now()
          const status = await fetch(`${base}/fonts`, { headers: { 'x-api-key': account.apiKey } }).then(
            (response) => response.status,
            () => 0,
          )
          answers.push({ status, ms: Date.now() - sent })
          await new Promise((resolve) => setTimeout(resolve, 100))
        }
      })()
      await new Promise((resolve) => setTimeout(resolve, 300))
      const uploadStarted = Date.now()
      const uploaded = await fetch(`${base}/admin/accounts/${account.id}/card-designs/${account.cardDesignId}/artwork`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/pdf' },
        body: objectStreamBombPdf(300),
      })
      const uploadMs = Date.now() - uploadStarted
      await new Promise((resolve) => setTimeout(resolve, 3000))
      done = true
      await polling
      const refused = answers.filter((answer) => answer.status !== 200)
      const slowest = Math.max(...answers.map((answer) => answer.ms))
      console.log(
        `### gateway process: bomb answered ${uploaded.status} in ${uploadMs} ms; a client's ${answers.length} GET /fonts: ${refused.length} not 200 (${JSON.stringify([...new Set(refused.map((r) => r.status))])}), slowest ${slowest} ms`,
      )
      expect(slowest).toBeLessThan(1000)
      expect(refused).toEqual([])
    } finally {
      await started.kill()
    }
  }, 120_000)
})
