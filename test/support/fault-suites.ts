// What the fault suites of test/e2e (webhooks, erasure and authentication under faults) share: isolated gateways,
// webhook receivers and workers that close themselves at the end of the file, a killer of Postgres connections, and
// the `###` lines that carry every figure a suite measures.
import { expect } from 'vitest'
import { sql } from 'drizzle-orm'
import postgres from 'postgres'
import type { Db } from '@letters/db'
import { startWebhookWorker } from '@letters/webhook-worker/worker'
import type { adminAccount } from './accounts.js'
import { openGateway, type Gateway } from './gateway.js'
import { silentLog } from './pipeline.js'
import { startWebhookReceiver, type WebhookReceiver } from './webhook-receiver.js'

/** Resolves after `ms` milliseconds. */
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Prints a figure a test measured, on a line starting with `###`. */
export const report = (line: string) => console.log(`### ${line}`)

/** How many times each value occurs. */
export const countBy = <T extends string | number>(values: readonly T[]) => {
  const counts: Record<string, number> = {}
  for (const value of values) counts[String(value)] = (counts[String(value)] ?? 0) + 1
  return counts
}

/** Everything a test opened; `closeAll` (each file's afterAll) closes it, newest first, whatever happened. */
export const closers: Array<() => Promise<unknown>> = []

export async function closeAll(): Promise<void> {
  for (const close of closers.splice(0).reverse()) await close().catch(() => undefined)
}

/** An account made through the admin API: its id, live API key, designs, sender and signature. */
export type Account = Awaited<ReturnType<typeof adminAccount>>
/** The app of an in-process gateway. */
export type App = Gateway['app']

/** An isolated in-process gateway, closed at the end of the file. */
export async function gateway(label: string, env: Record<string, string> = {}): Promise<Gateway> {
  const opened = await openGateway({ isolate: label, checkContract: false, env })
  closers.push(() => opened.close())
  return opened
}

/** A webhook receiver on 127.0.0.1 that records every delivery (answered by `answer`), closed at the end of the file. */
export async function receiver(answer?: Parameters<typeof startWebhookReceiver>[0]): Promise<WebhookReceiver> {
  const started = await startWebhookReceiver(answer)
  closers.push(() => started.close())
  return started
}

/** The webhook worker in this process, on the gateway's database and prefix, with a dispatcher of its own for the gateway's outbox. */
export function inProcessWorker(app: App, db: Db = app.db) {
  const worker = startWebhookWorker({ config: app.config, db, log: silentLog })
  closers.push(() => worker.close())
  return worker
}

/** Terminates every client connection to the database but its own, every few tens of ms, until stopped. */
export function connectionKiller(databaseUrl: string) {
  const admin = postgres(databaseUrl, { max: 1, onnotice: () => {} })
  let running = true
  let cuts = 0
  let killed = 0
  const loop = (async () => {
    while (running) {
      const rows = await admin`SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`.catch(() => [])
      cuts++
      killed += rows.length
      await sleep(20 + Math.random() * 40)
    }
  })()
  return {
    async stop() {
      running = false
      await loop
      await admin.end()
      return { cuts, killed }
    },
  }
}

/** Waits (up to 15 s) until `db` answers again once the connection killer stopped. */
export const reconnected = (db: Db) =>
  expect
    .poll(
      () =>
        db.execute(sql`SELECT 1`).then(
          () => true,
          () => false,
        ),
      { timeout: 15_000 },
    )
    .toBe(true)

/** Ids a hostile client puts in a path: SQL and NoSQL injections, traversals, NUL, fullwidth digits, 5,000 characters, UUIDs no row has. */
export const hostileIds = [
  "' OR 1=1 --",
  "00000000-0000-0000-0000-000000000000' OR '1'='1",
  '..%2F..%2Fadmin',
  '%00',
  '00000000-0000-0000-0000-000000000000',
  'ffffffff-ffff-ffff-ffff-ffffffffffff',
  '１２３４５６７８-1234-1234-1234-123456789012',
  'a'.repeat(5000),
  '{"$ne":null}',
  '*',
]
