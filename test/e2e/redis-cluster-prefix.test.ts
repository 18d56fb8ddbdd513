import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect } from 'vitest'
import { Queue } from 'bullmq'
import { Redis } from 'ioredis'
import { testConfig } from '../support/context.js'
import { it as base } from '../support/fixtures.js'
import { reachStatus } from '../support/pipeline.js'
import { freePort } from '../support/processes.js'

/**
 * A Redis Cluster refuses any command or script whose keys hash to different slots (CROSSSLOT),
 * on one node as on many. This test runs a cluster of one node holding every slot, of its own
 * (the Redis other test files share is no cluster), so it needs the redis-server binary, which
 * the machines CI runs on have. The service's client speaks to it as to a single Redis: one
 * node owns every slot, so no key is ever elsewhere.
 */
const hasRedisServer = spawnSync('redis-server', ['--version']).status === 0

/** QUEUE_PREFIX as a hash tag: only what is between the braces decides the slot. */
const prefix = `{${testConfig().queuePrefix}-cluster}`

/** Starts a cluster node with its files in `redisDir`. */
function spawnClusterNode(port: number, redisDir: string): ChildProcess {
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--cluster-enabled',
    'yes',
    '--cluster-config-file',
    join(redisDir, 'nodes.conf'),
    '--dir',
    redisDir,
    '--save',
    '',
    '--appendonly',
    'no',
    '--maxmemory-policy',
    'noeviction',
  ]
  return spawn('redis-server', args, { stdio: 'ignore' })
}

/** Waits for the node on `port` to answer, then gives it every slot: a cluster of one. */
async function holdEverySlot(port: number) {
  const admin = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null })
  admin.on('error', () => {})
  try {
    for (
      let tries = 0;
      !(await admin.connect().then(
        () => true,
        () => false,
      ));
      tries++
    ) {
      if (tries === 100) throw new Error(`redis-server did not start on port ${port}`)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    await admin.call('CLUSTER', 'ADDSLOTSRANGE', '0', '16383')
    for (let tries = 0; !String(await admin.call('CLUSTER', 'INFO')).includes('cluster_state:ok'); tries++) {
      if (tries === 100) throw new Error('the one-node cluster did not reach cluster_state:ok')
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  } finally {
    admin.disconnect()
  }
}

/** The cluster's URL; once the file is done, the node is killed and its files removed. */
// eslint-disable-next-line no-empty-pattern -- a fixture lists what it uses in an object pattern: here, nothing
const it = base.extend('redisUrl', { scope: 'file' }, async ({}, { onCleanup }) => {
  const port = await freePort()
  const redisDir = await mkdtemp(join(tmpdir(), 'letters-cluster-'))
  const redisServer = spawnClusterNode(port, redisDir)
  const stop = async () => {
    if (redisServer.exitCode === null) {
      redisServer.kill('SIGKILL')
      await once(redisServer, 'exit')
    }
    await rm(redisDir, { recursive: true, force: true })
  }
  await holdEverySlot(port).catch(async (error: unknown) => {
    await stop()
    throw error
  })
  onCleanup(stop)
  return `redis://127.0.0.1:${port}`
})
// The pipeline runs on the cluster: it is closed before the node is killed.
it.override('pipelineOptions', ({ redisUrl }) => ({ label: 'cluster', env: { REDIS_URL: redisUrl, QUEUE_PREFIX: prefix } }))

describe.skipIf(!hasRedisServer)('QUEUE_PREFIX as a Redis Cluster hash tag', () => {
  it('is needed: without one, BullMQ’s scripts touch keys of several slots and the cluster refuses them', async ({ redisUrl }) => {
    const connection = new Redis(redisUrl, { maxRetriesPerRequest: 1 })
    const queue = new Queue('address', { connection, prefix: testConfig().queuePrefix })
    try {
      await expect(queue.add('normalize-address', { letterId: crypto.randomUUID() }, { jobId: crypto.randomUUID() })).rejects.toThrow(/CROSSSLOT/)
    } finally {
      await queue.close()
      // What got written before the refusal (the queue's meta), one key at a time: the keys are
      // in different slots, so one UNLINK of them all would be refused too.
      for await (const keys of connection.scanStream({ match: `${testConfig().queuePrefix}:*` }))
        for (const key of keys as string[]) await connection.unlink(key)
      connection.disconnect()
    }
  })

  it('carries letters from the API to the printer on a cluster, every key of the service in the tag’s one slot', async ({ pipeline, redisUrl }) => {
    const ids = [await pipeline.send(), await pipeline.send({ message: 'Segunda carta, mismo slot' })]
    for (const id of ids)
      expect((await reachStatus(pipeline, id, 'printed', 20_000)).events.map((event) => event.status)).toEqual([
        'received',
        'ready_for_print',
        'printing',
        'printed',
      ])
    // A failed authentication: its counter is one of our own keys, as the rate limit's are.
    expect((await pipeline.app.inject({ method: 'GET', url: '/cards', headers: { 'x-api-key': 'lk_live_no-such-key' } })).statusCode).toBe(401)

    const redis = new Redis(redisUrl)
    try {
      const keys: string[] = []
      for await (const batch of redis.scanStream({ count: 1000 })) keys.push(...(batch as string[]))
      // BullMQ's keys of the two queues the letters went through, and our own.
      for (const expected of [`${prefix}:address:`, `${prefix}:production:`, `${prefix}:rate-limit:`, `${prefix}:auth-failures:`]) {
        expect(
          keys.some((key) => key.startsWith(expected)),
          `a key under ${expected}`,
        ).toBe(true)
      }
      expect(
        keys.filter((key) => !key.startsWith(`${prefix}:`)),
        'keys outside the prefix',
      ).toEqual([])
      const slot = await redis.call('CLUSTER', 'KEYSLOT', prefix)
      const slots = new Set(await Promise.all(keys.map((key) => redis.call('CLUSTER', 'KEYSLOT', key))))
      expect([...slots]).toEqual([slot])
      // The revocation channel (pub/sub, slot-free) is named under the prefix as well.
      expect(await redis.call('PUBSUB', 'CHANNELS', `${prefix}:*`)).toEqual([`${prefix}:api-key-revoked`])
    } finally {
      redis.disconnect()
    }
  }, 60_000)
})
