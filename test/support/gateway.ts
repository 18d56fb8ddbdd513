import { randomBytes } from 'node:crypto'
import { expect } from 'vitest'
import type { InjectOptions } from 'fastify'
import type { Config } from '@letters/config'
import { buildGateway, type App } from '@letters/gateway/server'
import { adminAccount } from './accounts.js'
import { checkStatusesAgainstContract, routeRecorder } from './contract.js'
import { ADMIN_TOKEN, isolatedDatabase, testConfig } from './context.js'

export interface GatewayOptions {
  /** Environment variables on top of the run's test configuration. */
  env?: Record<string, string>
  /**
   * A database and queue prefix of its own, named after this label: for a file whose workers,
   * dispatcher or counts would otherwise see the rows and jobs other files make in the shared ones.
   */
  isolate?: string
  /** Fail on close when a public route answered a status /openapi.json does not list (default true). */
  checkContract?: boolean
}

export interface Gateway {
  app: App
  config: Config
  /** Closes the app, then drops its own database if it has one. */
  close: () => Promise<void>
}

/** The one way the tests start an in-process gateway (startGateway, the fixtures and startPipeline all come here). */
export async function openGateway(options: GatewayOptions = {}): Promise<Gateway> {
  const database = options.isolate === undefined ? undefined : await isolatedDatabase(options.isolate)
  const own = database && { DATABASE_URL: database.url, QUEUE_PREFIX: `${testConfig().queuePrefix}-${options.isolate}-${randomBytes(3).toString('hex')}` }
  const config = testConfig({ ...own, ...options.env })
  let app: App | undefined
  const routes = routeRecorder()
  try {
    app = await buildGateway({ config, logger: false, onRoute: routes.onRoute })
    routes.remember(app)
    if (options.checkContract ?? true) checkStatusesAgainstContract(app)
    await app.ready()
  } catch (error) {
    // A gateway that did not start leaves nothing behind: its app closed, its database dropped.
    await app?.close().catch(() => undefined)
    await database?.drop().catch(() => undefined)
    throw error
  }
  return {
    app,
    config,
    async close() {
      try {
        await app.close()
      } finally {
        await database?.drop()
      }
    },
  }
}

/**
 * A gateway on this run's database and Redis; `overrides` are environment variables. Closing it fails if a public route answered a status /openapi.json does not list.
 * Kept for the files that start gateways by hand (several per file, or per test); the fixtures in @letters/test/support/fixtures start theirs the same way.
 */
export async function startGateway(overrides: Record<string, string> = {}): Promise<App> {
  return (await openGateway({ env: overrides })).app
}

type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE'

/** Calls the admin API with the run's admin token. */
export function adminClient(app: App) {
  const call = (method: Method, url: string, payload?: unknown, headers: Record<string, string> = {}) =>
    app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...headers },
      ...(payload === undefined ? {} : { payload: payload as InjectOptions['payload'] }),
    })
  return {
    get: (url: string) => call('GET', url),
    post: (url: string, payload?: unknown) => call('POST', url, payload ?? {}),
    patch: (url: string, payload: unknown) => call('PATCH', url, payload),
    delete: (url: string) => call('DELETE', url),
    /** A raw body (an artwork file) with its Content-Type. */
    put: (url: string, body: Buffer | string, contentType: string) => call('PUT', url, body, { 'content-type': contentType }),
    raw: call,
  }
}

export type AdminClient = ReturnType<typeof adminClient>

/** Calls the public API with an account's key. */
export function publicClient(app: App, apiKey: string) {
  return {
    get: (url: string) => app.inject({ method: 'GET', url, headers: { 'x-api-key': apiKey } }),
    delete: (url: string) => app.inject({ method: 'DELETE', url, headers: { 'x-api-key': apiKey } }),
    post: (url: string, payload: unknown, headers: Record<string, string> = {}) =>
      app.inject({ method: 'POST', url, headers: { 'x-api-key': apiKey, ...headers }, payload: payload as InjectOptions['payload'] }),
  }
}

export type PublicClient = ReturnType<typeof publicClient>

export type Account = Awaited<ReturnType<typeof adminAccount>>

/** A test-mode API key issued to the account through the admin API. */
export async function issueTestKey(app: App, accountId: string) {
  const response = await adminClient(app).post(`/admin/accounts/${accountId}/api-keys`, { mode: 'test' })
  expect(response.statusCode, response.body).toBe(201)
  return response.json<{ apiKey: string }>().apiKey
}

/** A campaign made through the admin API: "Hola {{nombre}}, tu cupón es {{ cupon }}.", nombre defaulting to "amigo"; `overrides` on top. */
export async function adminCampaign(
  app: App,
  owner: { id: string; cardDesignId: string; envelopeDesignId: string; senderId: string },
  overrides: Record<string, unknown> = {},
) {
  const response = await adminClient(app).post(`/admin/accounts/${owner.id}/campaigns`, {
    name: 'Otoño',
    cardDesignId: owner.cardDesignId,
    envelopeDesignId: owner.envelopeDesignId,
    senderId: owner.senderId,
    message: 'Hola {{nombre}}, tu cupón es {{ cupon }}.',
    variables: [
      { name: 'nombre', maxSize: 40, defaultValue: 'amigo', example: 'Lucía' },
      { name: 'cupon', maxSize: 10, defaultValue: null, example: 'OTONO10' },
    ],
    ...overrides,
  })
  expect(response.statusCode, response.body).toBe(201)
  return response.json<{ id: string }>().id
}
