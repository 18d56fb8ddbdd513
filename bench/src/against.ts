/**
 * `npm run bench -- --against <ref>`: this checkout's gateway and another release's, each on a
 * database its own migrations made, measured on the same rows in turn (this, other, this,
 * other…) in one run, so that the machine's mood weighs on both alike. Prints the ratios, and
 * says whether this checkout is slower than the other by more than the threshold.
 */
import { checkoutRelease } from '@letters/test/support/previous-release'
import { createAccount, spreadAccounts, type BenchAccount } from './accounts.js'
import type { Cleanup } from './cleanup.js'
import { prepareEnvironment, untilOutboxEmpty, type BenchEnvironment, type ServerOptions } from './environment.js'
import { averaged, measureLoad, type LoadOptions, type LoadResult, type LoadTarget } from './http-load.js'
import { creationTarget, listTarget } from './letter.js'
import { freePort } from '@letters/test/support/processes'
import { canReadCpu, cpuSnapshot } from './cpu.js'
import { grid, perSecond, wholeMs } from './report.js'

/**
 * How much slower than the other release a row may be before the comparison fails: its
 * throughput under 85% of the other's, or its p99 over 115% of the other's plus 2 ms (a p99 of a
 * few milliseconds moves by one or two between runs). Two runs of the same code side by side
 * differ by less than 5% in throughput on an idle machine (docs/benchmarks.md).
 */
export const AGAINST_THRESHOLD = { throughput: 0.85, p99: 1.15, p99SlackMs: 2 }

/** Load on each side before the first counted row (see runAgainst). */
const SIDE_WARM_UP_SECONDS = 5

export interface AgainstOptions {
  ref: string
  servers: ServerOptions
  load: LoadOptions
  rounds: number
  progress: (text: string) => void
}

export interface AgainstResult {
  table: string
  /** The rows past the threshold (or with answers that were not 2xx), in words; empty when none is. */
  slower: string[]
}

interface Side {
  name: string
  env: BenchEnvironment
  gateway: string
  /** The gateway's process group, whose CPU time is read around each row. */
  gatewayGroup: number
  spread: BenchAccount[]
  hot: BenchAccount
}

/** The rows both releases are measured on: creation (spread over accounts and on one) and the list read. */
function rowsOf(side: Side): Array<{ label: string; request: LoadTarget }> {
  return [
    { label: 'POST /single, 50 accounts', request: creationTarget(side.gateway, side.spread) },
    { label: 'POST /single, one account', request: creationTarget(side.gateway, [side.hot]) },
    { label: 'GET /cards?limit=20, 50 accounts', request: listTarget(side.gateway, side.spread) },
  ]
}

async function prepareSide(name: string, cleanup: Cleanup, servers: ServerOptions): Promise<Side> {
  const env = await prepareEnvironment(cleanup, servers)
  const port = await freePort()
  const started = await env.startService('gateway', { PORT: String(port) })
  const gateway = `http://127.0.0.1:${port}`
  const spread = await spreadAccounts(gateway, env.adminToken)
  return { name, env, gateway, gatewayGroup: started.child.pid!, spread, hot: await createAccount(gateway, env.adminToken, 'Cuenta caliente') }
}

const ratio = (value: number) => `${value.toFixed(2)}×`

export async function runAgainst(options: AgainstOptions, cleanup: Cleanup): Promise<AgainstResult> {
  const { ref, servers, load, rounds, progress } = options
  progress(`checking out ${ref} in a scratch worktree`)
  const release = await checkoutRelease(ref, { installWhenApart: true })
  cleanup.defer(`the worktree of ${ref}`, release.remove)
  const other = release.commit.startsWith(ref) ? ref : `${ref} (${release.commit.slice(0, 7)})`

  progress('this checkout: fresh database, Redis prefix, gateway and accounts')
  const here = await prepareSide('this checkout', cleanup, servers)
  progress(`${other}: fresh database (its own migrations), Redis prefix, gateway and accounts`)
  const there = await prepareSide(other, cleanup, { ...servers, releaseDir: release.dir })

  const sides = [here, there]
  const rows = rowsOf(here).map(({ label }, index) => ({ label, bySide: sides.map((side) => ({ side, request: rowsOf(side)[index]!.request })) }))
  const results = new Map<string, LoadResult[]>()
  /** CPU milliseconds per answered request, of the gateway and of Postgres, per row and side. */
  const cpu = new Map<string, Array<{ gateway: number; postgres: number }>>()
  // Each side warmed up on the first row before anything is counted: the side prepared first sat
  // idle while the other was set up, and its first round, always this checkout's, ran cold
  // (a quarter to a third below its later rounds).
  const [first] = rows
  for (const { side, request } of first?.bySide ?? []) {
    progress(`${side.name}: warming up`)
    await measureLoad(request, { ...load, durationSeconds: SIDE_WARM_UP_SECONDS, warmUpSeconds: 0 })
    await untilOutboxEmpty(side.env, progress)
  }
  for (const row of rows) {
    for (let round = 0; round < rounds; round++) {
      // Which goes first alternates: the second of a pair does not always inherit the first's warm Postgres.
      const order = round % 2 === 0 ? row.bySide : [...row.bySide].reverse()
      for (const { side, request } of order) {
        // The warm-up apart, so that the CPU read around the row is the counted load's only.
        if (round < 2 && load.warmUpSeconds > 0) await measureLoad(request, { ...load, durationSeconds: load.warmUpSeconds, warmUpSeconds: 0 })
        const before = canReadCpu ? cpuSnapshot(side.gatewayGroup) : undefined
        const result = await measureLoad(request, { ...load, warmUpSeconds: 0 })
        const key = `${row.label}\u0000${side.name}`
        const { answered } = result
        if (before && answered > 0) {
          const after = cpuSnapshot(side.gatewayGroup)
          const perRequest = { gateway: (1000 * (after.service - before.service)) / answered, postgres: (1000 * (after.postgres - before.postgres)) / answered }
          cpu.set(key, [...(cpu.get(key) ?? []), perRequest])
        }
        progress(`${row.label}, ${side.name}, round ${round + 1} of ${rounds}: ${perSecond(result.requestsPerSecond, 'req')}, p99 ${wholeMs(result.p99Ms)}`)
        results.set(key, [...(results.get(key) ?? []), result])
        await untilOutboxEmpty(side.env, progress)
      }
    }
  }
  const cpuOf = (key: string) => {
    const samples = cpu.get(key)
    if (!samples || samples.length === 0) return ''
    const mean = (pick: (sample: { gateway: number; postgres: number }) => number) => samples.reduce((sum, sample) => sum + pick(sample), 0) / samples.length
    return `${mean((sample) => sample.gateway).toFixed(2)} / ${mean((sample) => sample.postgres).toFixed(2)}`
  }

  const slower: string[] = []
  const lines = rows.map(({ label }) => {
    const mine = averaged(results.get(`${label}\u0000${here.name}`)!)
    const theirs = averaged(results.get(`${label}\u0000${there.name}`)!)
    const throughput = mine.requestsPerSecond / theirs.requestsPerSecond
    const p99 = mine.p99Ms / theirs.p99Ms
    if (throughput < AGAINST_THRESHOLD.throughput) slower.push(`${label}: ${ratio(throughput)} the throughput of ${other}`)
    if (mine.p99Ms > AGAINST_THRESHOLD.p99 * theirs.p99Ms + AGAINST_THRESHOLD.p99SlackMs) slower.push(`${label}: p99 ${ratio(p99)} that of ${other}`)
    const failed = (result: LoadResult) => Object.values(result.failures).reduce((sum, count) => sum + count, 0)
    // A side that answered anything but 2xx measured something else (a refusal is fast): no verdict.
    for (const [side, result] of [
      [here.name, mine],
      [other, theirs],
    ] as const) {
      if (failed(result) > 0) slower.push(`${label}: ${side} answered ${failed(result)} requests with no 2xx (${JSON.stringify(result.failures)})`)
    }
    return [
      label,
      `${perSecond(mine.requestsPerSecond, 'req')}, p99 ${wholeMs(mine.p99Ms)}`,
      `${perSecond(theirs.requestsPerSecond, 'req')}, p99 ${wholeMs(theirs.p99Ms)}`,
      ratio(throughput),
      ratio(p99),
      cpuOf(`${label}\u0000${here.name}`),
      cpuOf(`${label}\u0000${there.name}`),
      `${failed(mine)} / ${failed(theirs)}`,
    ]
  })
  const table = grid(
    [
      'Row',
      'this checkout',
      other,
      'throughput, this ÷ other',
      'p99, this ÷ other',
      'CPU ms a request, gateway / Postgres (this)',
      `(${other})`,
      'not 2xx (this / other)',
    ],
    lines,
  )
  const verdict =
    slower.length === 0
      ? `No row is past the threshold (throughput ≥ ${AGAINST_THRESHOLD.throughput * 100}% of ${other}'s, p99 ≤ ${Math.round(AGAINST_THRESHOLD.p99 * 100)}% + ${AGAINST_THRESHOLD.p99SlackMs} ms).`
      : `Slower than ${other} past the threshold, or not comparable:\n${slower.map((line) => `- ${line}`).join('\n')}`
  return { table: `${table}\n\n${verdict}\n`, slower }
}
