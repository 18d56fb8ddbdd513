/**
 * The tests' shared set-up, as vitest fixtures: a test asks for what it needs by name
 * (`async ({ gateway, account }) => …`) and gets it made, and closed after.
 *
 * - `gateway`: an in-process gateway (App), one per test file. Its options come from
 *   `gatewayOptions`, set per file with `const it = base.extend({ gatewayOptions: { env, isolate } })`
 *   at the top level (a file-scoped fixture cannot be overridden inside a describe). A file's
 *   values go in a test API of its own: `override` at a file's top level would change the shared
 *   one, and the next file run in the same worker would inherit them.
 * - `admin`: the admin API of that gateway.
 * - `account`: a fresh account for each test, with `accountCredits` credits (100 unless
 *   overridden), a live API key, a card and an envelope design, a sender and a signature;
 *   `client` calls the public API with its live key.
 * - `testKey` / `testClient`: a test-mode key of that account, and the public API with it.
 * - `campaign`: an active campaign of that account (adminCampaign, `campaignOverrides` on top).
 * - `pipeline`: gateway, dispatcher, letter clock and workers, one per file (`pipelineOptions`);
 *   it has its own gateway (`pipeline.app`), on a database and queue prefix of its own.
 * - `database`: a migrated database of the file's own (`databaseLabel` names it, `databaseUrl`
 *   is its URL, for a second pool or a process of the test's) and a pool on it, for tests of the
 *   domain below the gateway; `owner`: a fresh account there (10 credits) and its
 *   designs, sender and signature, for each test (newAccount, newCompanyData).
 * A public route's answer that /openapi.json does not list fails the file when `gateway` closes.
 *
 * Scopes: the gateway and the pipeline are 'file' (starting an app costs hundreds of
 * milliseconds; each file's has its own options, database or queue prefix, so 'worker' would
 * share what must not be); accounts are per test, so no test sees another's balance or letters.
 */
import { test as base } from 'vitest'
import { closeDb, createDb, type Db } from '@letters/db'
import type { App } from '@letters/gateway/server'
import { adminAccount } from './accounts.js'
import { isolatedDatabase } from './context.js'
import { newAccount, newCompanyData } from './factories.js'
import { adminCampaign, adminClient, issueTestKey, openGateway, publicClient, type Account, type GatewayOptions } from './gateway.js'
import { startPipeline, type Pipeline, type PipelineOptions } from './pipeline.js'

export const test = base
  .extend('gatewayOptions', { scope: 'file' }, {} as GatewayOptions)
  .extend('gateway', { scope: 'file' }, async ({ gatewayOptions }, { onCleanup }): Promise<App> => {
    const gateway = await openGateway(gatewayOptions)
    onCleanup(() => gateway.close())
    return gateway.app
  })
  .extend('admin', { scope: 'file' }, ({ gateway }) => adminClient(gateway))
  .extend('accountCredits', 100 as number)
  .extend('account', ({ gateway, accountCredits }): Promise<Account> => adminAccount(gateway, accountCredits))
  .extend('client', ({ gateway, account }) => publicClient(gateway, account.apiKey))
  .extend('testKey', ({ gateway, account }) => issueTestKey(gateway, account.id))
  .extend('testClient', ({ gateway, testKey }) => publicClient(gateway, testKey))
  .extend('campaignOverrides', {} as Record<string, unknown>)
  .extend('campaign', ({ gateway, account, campaignOverrides }) => adminCampaign(gateway, account, campaignOverrides))
  .extend('pipelineOptions', { scope: 'file' }, { label: 'pipeline' } as PipelineOptions)
  .extend('pipeline', { scope: 'file' }, async ({ pipelineOptions }, { onCleanup }): Promise<Pipeline> => {
    const pipeline = await startPipeline(pipelineOptions.label, pipelineOptions)
    onCleanup(() => pipeline.close())
    return pipeline
  })
  .extend('databaseLabel', { scope: 'file' }, 'domain' as string)
  .extend('databaseUrl', { scope: 'file' }, async ({ databaseLabel }, { onCleanup }): Promise<string> => {
    const isolated = await isolatedDatabase(databaseLabel)
    onCleanup(() => isolated.drop())
    return isolated.url
  })
  .extend('database', { scope: 'file' }, ({ databaseUrl }, { onCleanup }): Db => {
    const db = createDb(databaseUrl, { max: 4 })
    onCleanup(() => closeDb(db))
    return db
  })
  .extend('owner', async ({ database }) => {
    const accountId = (await newAccount(database, { credits: 10 })).id
    return { accountId, company: await newCompanyData(database, accountId) }
  })

export const it = test
