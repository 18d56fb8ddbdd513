import { describe, expect, it } from 'vitest'
import { SQLSTATE, closeDb, createDb, sqlState } from '@letters/db'
import { limitedRole, terminateRoleBackends } from '@letters/test/support/connection-budget'
import { isolatedDatabase } from '@letters/test/support/context'
import { openGateway } from '@letters/test/support/gateway'
import { moneyState } from '@letters/test/support/ledger'
import { adminAccount, expectError, publicClient, singleLetter } from './helpers.js'

describe('a database with no connection slot left (53300, "too many clients")', () => {
  it('is answered 503 with Retry-After, never 500, and charges nothing; once a slot frees the same request goes through', async () => {
    const isolated = await isolatedDatabase('budget')
    const role = await limitedRole(isolated.url, 3)
    const gateway = await openGateway({ env: { DATABASE_URL: role.url, DATABASE_POOL_MAX: '3' } })
    const observer = createDb(isolated.url, { max: 1 })
    let release = async () => {}
    try {
      const app = gateway.app
      const account = await adminAccount(app, 20)
      const before = await moneyState(observer, account.id)

      // Every slot of the role taken by others, and the gateway's own connections ended (a
      // pooler restart): its pool must open new ones, and Postgres refuses them. The gateway may
      // open one again between the two (its background work): then end it and try again.
      for (let attempt = 1; ; attempt++) {
        await terminateRoleBackends(isolated.url, new URL(role.url).username)
        const held = await role.hold(3).catch((error: unknown) => {
          if (attempt >= 10 || sqlState(error) !== SQLSTATE.tooManyConnections) throw error
          return undefined
        })
        if (held) {
          release = held
          break
        }
      }
      const client = publicClient(app, account.apiKey)
      for (const send of [() => client.post('/single', singleLetter(account)), () => client.get('/company-data')]) {
        const refused = await send()
        expectError(refused, 503, 'Service Unavailable', 'El servicio no está disponible en este momento; inténtalo de nuevo en unos segundos')
        expect(refused.headers['retry-after']).toBe('5')
      }
      expect(await moneyState(observer, account.id)).toEqual(before)

      await release()
      release = async () => {}
      const accepted = await client.post('/single', singleLetter(account))
      expect(accepted.statusCode, accepted.body).toBe(200)
      expect((await moneyState(observer, account.id)).balance).toBeLessThan(before.balance)
    } finally {
      await release()
      await closeDb(observer)
      await gateway.close()
      await role.drop()
      await isolated.drop()
    }
  }, 60_000)
})
