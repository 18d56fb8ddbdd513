import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect } from 'vitest'
import { pino, type Logger } from 'pino'
import { startAddressWorker } from '@letters/address-worker/worker'
import { startProductionWorker, type ProductionWorkerOptions } from '@letters/production-worker/worker'
import { LetterClock, OutboxDispatcher } from '@letters/pipeline'
import { adminAccount } from './accounts.js'
import { ADMIN_TOKEN } from './context.js'
import { openGateway } from './gateway.js'
import { singleLetter } from './factories.js'

export const silentLog = pino({ level: 'silent' })

export type CardView = {
  id: string
  status: string
  cost: number
  address: Record<string, unknown> | null
  events: Array<{ status: string; detail: string | null }>
}

/**
 * The whole system in this process, on a database and queue prefix of its own: the gateway
 * with its outbox dispatcher and letter clock, the address worker (with the reconciler if asked) and (unless
 * asked not to) the production worker, printing into a spool directory of its own.
 */
export interface PipelineOptions {
  /** Names the pipeline's database, queue prefix and spool directory. */
  label: string
  env?: Record<string, string>
  production?: Partial<ProductionWorkerOptions> | false
  reconcile?: boolean
  /** Where the dispatcher, clock and workers log (silent unless a test reads the lines). */
  log?: Logger
}

export async function startPipeline(label: string, options: Omit<PipelineOptions, 'label'> = {}) {
  const floorDir = await mkdtemp(join(tmpdir(), `letters-${label}-`))
  // The pipeline's gateway was never held to the contract's status check; it still is not.
  const gateway = await openGateway({
    isolate: label,
    checkContract: false,
    env: { ARTIFACTS_DIR: join(floorDir, 'artifacts'), SPOOL_DIR: join(floorDir, 'spool'), ...options.env },
  })
  const { app, config } = gateway
  const log = options.log ?? silentLog
  const dispatcher = new OutboxDispatcher(app.db, app.queues, log, { idleMs: 50, maxBackoffMs: 500, sendTimeoutMs: 1000 })
  dispatcher.start()
  const clock = new LetterClock(app.db, log, { intervalMs: config.clockIntervalMs, testMailedAfterMs: config.testMailedAfterMs })
  clock.start()
  const addressWorker = startAddressWorker({ config, db: app.db, log, dispatchOutbox: true, reconcile: options.reconcile ?? false })
  const startFloor = (extra: Partial<ProductionWorkerOptions> = {}) => startProductionWorker({ config, db: app.db, log, ...options.production, ...extra })
  let productionWorker = options.production === false ? undefined : startFloor()

  const admin = (method: 'GET' | 'POST', url: string, payload?: unknown) =>
    app.inject({ method, url, headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, ...(payload === undefined ? {} : { payload: payload as object }) })
  /** Closes each part even when one before it fails, then throws the first failure. */
  async function close() {
    const steps = [
      () => clock.stop(),
      () => dispatcher.stop(),
      () => addressWorker.close(),
      async () => productionWorker?.close(),
      () => gateway.close(),
      () => rm(floorDir, { recursive: true, force: true }),
    ]
    const failures: unknown[] = []
    for (const step of steps) await step().catch((error: unknown) => failures.push(error))
    if (failures.length > 0) throw failures[0]
  }
  const account = await adminAccount(app, 1000, 'Papelería Luna').catch(async (error: unknown) => {
    await close().catch(() => undefined)
    throw error
  })

  const client = (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object) =>
    app.inject({ method, url, headers: { 'x-api-key': account.apiKey }, ...(payload ? { payload } : {}) })

  return {
    config,
    app,
    account,
    spoolDir: config.spoolDir,
    addressWorker: addressWorker.worker,
    admin,
    client,
    get productionWorker() {
      return productionWorker
    },
    /** Starts a production worker (again), e.g. after the test stopped the first one. */
    startProductionWorker(extra: Partial<ProductionWorkerOptions> = {}) {
      productionWorker = startFloor(extra)
      return productionWorker
    },
    /** POST /single with a valid Spanish letter, `overrides` on top; returns the card id. */
    async send(overrides: Record<string, unknown> = {}) {
      const response = await client(
        'POST',
        '/single',
        singleLetter(account, { message: 'Gracias por tu pedido, Lucía. ¡Hasta pronto!', address: 'C/ Mayor 1', province: '', ...overrides }),
      )
      expect(response.statusCode, response.body).toBe(200)
      return response.json<{ cardId: string }>().cardId
    },
    card: async (id: string) => (await client('GET', `/cards/${id}`)).json<CardView>(),
    balance: async () => (await admin('GET', `/admin/accounts/${account.id}`)).json<{ balance: number }>().balance,
    /** The files in the spool, without the ones still being written. */
    spooled: async () => (await readdir(config.spoolDir).catch(() => [] as string[])).filter((name) => !name.startsWith('.')).sort(),
    clock,
    close,
  }
}

export type Pipeline = Awaited<ReturnType<typeof startPipeline>>

/**
 * Waits until the letter reaches `status` (the workers run in the background). The default
 * ceiling leaves a loaded machine room (a letter printed in about a second alone takes several
 * times that beside three other files on two cores) and stays under vitest's 30 s test timeout,
 * so that a letter that never gets there fails with its status; a test that waits longer says so.
 */
export async function reachStatus(pipeline: Pipeline, id: string, status: string, timeout = 25_000) {
  await expect.poll(async () => (await pipeline.card(id)).status, { timeout, interval: 50 }).toBe(status)
  return pipeline.card(id)
}
