import type { FastifyRateLimitOptions, FastifyRateLimitStore, FastifyRateLimitStoreCtor } from '@fastify/rate-limit'
import type { Redis } from 'ioredis'

type Counted = (error: Error | null, result?: { current: number; ttl: number }) => void

/**
 * Adds each key's count of the batch (ARGV: count, window in ms, per key) and answers each key's
 * total and milliseconds left. A key this batch created gets its window, as @fastify/rate-limit's
 * own script does on a first increment. All keys in one script: a single Redis, or a cluster
 * when QUEUE_PREFIX is a hash tag ({letters}), which puts every key in one slot (without one, a
 * batch of keys in different slots would fail, and skipOnError let everything through).
 */
const INCREMENT_ALL = `
  local answers = {}
  for i, key in ipairs(KEYS) do
    local count = tonumber(ARGV[2 * i - 1])
    local window = tonumber(ARGV[2 * i])
    local current = redis.call('INCRBY', key, count)
    local ttl = window
    if current == count then
      redis.call('PEXPIRE', key, window)
    else
      ttl = redis.call('PTTL', key)
      -- A count without a window (whatever left it) would refuse the account for good: it gets one.
      if ttl < 0 then
        redis.call('PEXPIRE', key, window)
        ttl = window
      end
    end
    answers[i] = {current, ttl}
  end
  return answers
`

/** A key's count and time left without counting (the plugin's `increment: false`). */
const READ = `
  local current = redis.call('GET', KEYS[1])
  if not current then return {0, 0} end
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl < 0 then ttl = 0 end
  return {tonumber(current), ttl}
`

/** The client once the two scripts are defined on it. */
type Scripts = {
  rateLimitIncrementAll(keys: number, ...keysAndArgs: Array<string | number>): Promise<Array<[number, number]>>
  rateLimitReadOne(key: string): Promise<[number, number]>
}

/**
 * The increments asked for during one turn of the event loop, sent to Redis together in one
 * EVAL once the turn's I/O callbacks have run (setImmediate). Each request still gets its own
 * exact count: the n requests of one key in a batch get the totals INCRBY n leaves behind them,
 * one each, as n INCRs in a row would have given.
 */
class IncrementBatcher {
  private pending = new Map<string, { window: number; callbacks: Counted[] }>()
  private readonly redis: Scripts

  constructor(redis: Redis) {
    redis.defineCommand('rateLimitIncrementAll', { lua: INCREMENT_ALL })
    redis.defineCommand('rateLimitReadOne', { numberOfKeys: 1, lua: READ })
    this.redis = redis as unknown as Scripts
  }

  increment(key: string, window: number, counted: Counted): void {
    if (this.pending.size === 0) setImmediate(() => this.flush())
    const entry = this.pending.get(key)
    if (entry) entry.callbacks.push(counted)
    else this.pending.set(key, { window, callbacks: [counted] })
  }

  private flush(): void {
    const batch = [...this.pending]
    this.pending = new Map()
    const args: Array<string | number> = batch.map(([key]) => key)
    for (const [, { window, callbacks }] of batch) args.push(callbacks.length, window)
    const answered = new Set<Counted>()
    this.redis
      .rateLimitIncrementAll(batch.length, ...args)
      .then((answers) => {
        batch.forEach(([, { callbacks }], index) => {
          const [total, ttl] = answers[index]!
          const first = total - callbacks.length
          callbacks.forEach((counted, position) => {
            answered.add(counted)
            counted(null, { current: first + position + 1, ttl })
          })
        })
      })
      // Redis failed, or answering did: whoever has no answer yet gets the error (skipOnError lets them through).
      .catch((error: unknown) => {
        const failure = error instanceof Error ? error : new Error(String(error))
        for (const [, { callbacks }] of batch) for (const counted of callbacks) if (!answered.has(counted)) counted(failure)
      })
  }

  read(key: string, counted: Counted): void {
    this.redis.rateLimitReadOne(key).then(
      ([current, ttl]) => counted(null, { current, ttl }),
      (error: Error) => counted(error),
    )
  }
}

/** Options of the plugin's own RedisStore that change how a count is kept; this store keeps the plain window only. */
function assertPlainWindow(options: { continueExceeding?: boolean; exponentialBackoff?: boolean }) {
  if (options.continueExceeding || options.exponentialBackoff) {
    throw new Error('the batched rate-limit store counts plain windows only: continueExceeding and exponentialBackoff are not supported')
  }
}

/**
 * A store for @fastify/rate-limit (its `store` option) that counts in Redis, under the same keys
 * as the plugin's RedisStore (so every replica counts together), with one round trip per turn of
 * the event loop instead of one per request: under load, the Redis call of one request was a
 * third of its syscalls and Redis's own CPU. A failed call fails every request of its batch,
 * which `skipOnError` then lets through as before.
 */
export function batchedRedisStore(redis: Redis, prefix: string): FastifyRateLimitStoreCtor {
  const batcher = new IncrementBatcher(redis)
  const store = (keyPrefix: string): FastifyRateLimitStore & { read: (key: string, counted: Counted) => void } => ({
    incr: (key, counted, timeWindow) => batcher.increment(keyPrefix + key, timeWindow, counted),
    read: (key, counted) => batcher.read(keyPrefix + key, counted),
    child(routeOptions) {
      assertPlainWindow(routeOptions as { continueExceeding?: boolean })
      const route = (routeOptions as unknown as { routeInfo: { method?: string; url?: string } }).routeInfo
      return store(`${keyPrefix}${route.method}${route.url}-`)
    },
  })
  return class {
    constructor(options: FastifyRateLimitOptions) {
      assertPlainWindow(options)
      return store(prefix)
    }
  } as unknown as FastifyRateLimitStoreCtor
}
