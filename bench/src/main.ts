/**
 * npm run bench: the service and its baselines measured side by side in one run, on a fresh
 * database, Redis key prefix and directory that are removed at the end (Ctrl-C and failures
 * included). Prints a Markdown table of ratios to baselines run beside them: absolute figures move
 * with the machine's load, ratios between rows of one run much less.
 */
import { cpus } from 'node:os'
import { performance } from 'node:perf_hooks'
import { parseArgs } from 'node:util'
import { createAccount, spreadAccounts, withKey, type BenchAccount } from './accounts.js'
import { Cleanup } from './cleanup.js'
import { prepareEnvironment, untilOutboxEmpty, type BenchEnvironment } from './environment.js'
import { averaged, measureLoad, type LoadOptions, type LoadResult, type LoadTarget } from './http-load.js'
import { BULK_RECIPIENTS, createBulkCampaign, measureBulk, type BulkLatency } from './bulk.js'
import { bareLetter, creationTarget, listTarget, singleLetter } from './letter.js'
import { measurePipeline } from './pipeline.js'
import { measureProofs } from './proofs.js'
import { QR_LETTERS, qrTarget, trackedLetters } from './qr.js'
import { runHistoryBench } from './history.js'
import { runAgainst } from './against.js'
import { CLI_RUNS, measureCliStart, type WallTimes } from './cli.js'
import { measureRenderThroughput } from '@letters/render/bench/render-throughput'
import { measurePlotter, measureTwins, plotterRows, twinRow } from './handwriting.js'
import { figure, markdownTable, ms, percent, perSecond, target, times, whole, wholeMs, type Row } from './report.js'

/** Letters each account holds in a `--only lists` run: the full run's accounts hold a few hundred by the list rows. */
const LIST_LETTERS = 1000

const USAGE = `npm run bench [-- options]
  --duration <s>      seconds of load per HTTP row and round, after 1 s of warm-up (default 5)
  --connections <n>   concurrent connections of the HTTP rows (default 50)
  --rounds <n>        times each HTTP row is measured, interleaved with its baseline, then averaged (default 2)
  --letters <n>       letters per pipeline round (default: about 20 s of rendering on one core, 20 to 2,000)
  --postgres <url>    the Postgres server (default postgres://postgres@127.0.0.1:5432/postgres)
  --redis <url>       the Redis server (default redis://127.0.0.1:6379)
  --only lists        only the list GETs, hello-world and the bare reads, on accounts given ${LIST_LETTERS} letters each
                      (one made through POST /single, the rest copied in SQL): about a minute
  --only bulk         only POST /cards/bulk with ${BULK_RECIPIENTS} recipients (JSON), one request at a time: under a minute
  --only render       only rendering on one core, letters without and with a design: no database or Redis, under a minute
  --only qr           only GET /q/{code} (a QR code's scan, its redirect not followed) on ${QR_LETTERS} letters' codes, beside
                      hello-world: under a minute
  --only cli          only the operator CLI's start: its --help compiled, through npm and through tsx, beside node's
                      own start (node -e ''), ${CLI_RUNS} runs of each in turns: about a minute
  --against <ref>     this checkout beside another release (a commit, tag or branch, checked out in a scratch
                      worktree): the creation and list rows of both, in turn, with their ratios; exits 1 when a
                      row is slower than the other release's past the threshold (docs/benchmarks.md)
  --history <n>       only the history rows: each read, loop round, /metrics, the floor page and an endpoint's deletion on
                      a database of 1,000 letters and on one of <n> letters over 18 months, with their ratio, and the
                      bytes per letter once the retention has run (1000000: about 15 minutes)`

const { values: args } = parseArgs({
  options: {
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '50' },
    rounds: { type: 'string', default: '2' },
    letters: { type: 'string' },
    postgres: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/postgres' },
    redis: { type: 'string', default: 'redis://127.0.0.1:6379' },
    only: { type: 'string' },
    history: { type: 'string' },
    against: { type: 'string' },
    help: { type: 'boolean', default: false },
  },
})
if (args.help) {
  process.stdout.write(`${USAGE}\n`)
  process.exit(0)
}
const positive = (name: string, value: string | undefined) => {
  const parsed = Number(value)
  if (!Number.isInteger(parsed) || parsed < 1) {
    process.stderr.write(`--${name}=${value}: must be a positive whole number\n\n${USAGE}\n`)
    process.exit(2)
  }
  return parsed
}
const sectionNames = ['lists', 'bulk', 'render', 'qr', 'cli']
if (args.only !== undefined && !sectionNames.includes(args.only)) {
  process.stderr.write(`--only=${args.only}: the choices are 'lists', 'bulk', 'render', 'qr' and 'cli'\n\n${USAGE}\n`)
  process.exit(2)
}
const load: LoadOptions = { connections: positive('connections', args.connections), durationSeconds: positive('duration', args.duration), warmUpSeconds: 1 }
const rounds = positive('rounds', args.rounds)
const historyLetters = args.history === undefined ? undefined : positive('history', args.history)
const lettersAsked = args.letters === undefined ? undefined : positive('letters', args.letters)

/** Letters whose proofs are timed. */
const PROOF_LETTERS = 8

const began = performance.now()
const progress = (text: string) => process.stderr.write(`[${((performance.now() - began) / 1000).toFixed(0).padStart(3)} s] ${text}\n`)

/** About 20 s of one core's rendering, in tens, between 20 and 2,000 (the figure, measured rather than projected once rendering is fast enough). */
const pipelineLetters = (lettersPerSecond: number) => Math.min(2000, Math.max(20, Math.floor((lettersPerSecond * 20) / 10) * 10))

/**
 * Measures a group of targets in turn, `rounds` times over (A B A B…), each target's figures
 * averaged over its rounds: a burst of other work on a shared machine then weighs on a
 * baseline and on the row compared with it alike. The outbox is drained after each target, so
 * that one row's backlog does not slow the next.
 */
async function interleaved<Key extends string>(
  env: BenchEnvironment,
  group: Record<Key, { label: string; request: LoadTarget }>,
): Promise<Record<Key, LoadResult>> {
  const entries = Object.entries(group) as Array<[Key, { label: string; request: LoadTarget }]>
  const results = new Map<Key, LoadResult[]>(entries.map(([row]) => [row, []]))
  for (let round = 0; round < rounds; round++) {
    for (const [row, { label, request }] of entries) {
      const result = await measureLoad(request, { ...load, warmUpSeconds: round === 0 ? load.warmUpSeconds : 0 })
      progress(`${label}, round ${round + 1} of ${rounds}: ${perSecond(result.requestsPerSecond, 'req')}, p99 ${wholeMs(result.p99Ms)}`)
      results.get(row)!.push(result)
      await untilOutboxEmpty(env, progress)
    }
  }
  return Object.fromEntries(entries.map(([row]) => [row, averaged(results.get(row)!)])) as Record<Key, LoadResult>
}

/** The list GETs, one account per connection, interleaved with hello-world and the bare reads. */
function measureLists(env: BenchEnvironment, gateway: string, helloWorld: string, bareRead: string, spread: BenchAccount[]) {
  const withAccount = (account: BenchAccount) => ({ 'x-account-id': account.id })
  return interleaved(env, {
    hello: { label: 'hello-world', request: { url: helloWorld, requests: [{}] } },
    bareDesigns: {
      label: 'bare read, GET /card-designs',
      request: { url: `${bareRead}/card-designs`, requests: spread.map((account) => ({ headers: withAccount(account) })) },
    },
    cardDesigns: {
      label: 'GET /card-designs, 50 accounts',
      request: { url: `${gateway}/card-designs`, requests: spread.map((account) => ({ headers: withKey(account) })) },
    },
    bareList: {
      label: 'bare read, GET /cards?limit=20',
      request: { url: `${bareRead}/cards?limit=20`, requests: spread.map((account) => ({ headers: withAccount(account) })) },
    },
    cardList: {
      label: 'GET /cards?limit=20, 50 accounts',
      request: listTarget(gateway, spread),
    },
  })
}

function httpRow(measure: string, result: LoadResult, extra: Pick<Row, 'ratio' | 'target'> = {}): Row {
  return {
    measure,
    result: perSecond(result.requestsPerSecond, 'req'),
    p50: wholeMs(result.p50Ms),
    p99: wholeMs(result.p99Ms),
    failed:
      Object.entries(result.failures)
        .map(([status, count]) => `${status}×${count}`)
        .join(' ') || '0',
    ...extra,
  }
}

function listRows({ hello, bareDesigns, cardDesigns, bareList, cardList }: Awaited<ReturnType<typeof measureLists>>): Row[] {
  const ofHello = (result: LoadResult) => ({ ratio: percent(result.requestsPerSecond / hello.requestsPerSecond, 'hello-world') })
  return [
    httpRow('Bare read, GET /card-designs (baseline)', bareDesigns, ofHello(bareDesigns)),
    httpRow('Bare read, GET /cards?limit=20 (baseline)', bareList, ofHello(bareList)),
    httpRow('GET /card-designs, 50 accounts', cardDesigns, {
      ratio: percent(cardDesigns.requestsPerSecond / hello.requestsPerSecond, 'hello-world'),
      target: target('≥ 50%', cardDesigns.requestsPerSecond >= 0.5 * hello.requestsPerSecond),
    }),
    httpRow('GET /cards?limit=20, 50 accounts', cardList, {
      ratio: percent(cardList.requestsPerSecond / hello.requestsPerSecond, 'hello-world'),
      target: target('≥ 50%', cardList.requestsPerSecond >= 0.5 * hello.requestsPerSecond),
    }),
  ]
}

/** A scan answered within 20 ms at the 99th percentile: a phone waits on it before the client's page even starts. */
const QR_P99_TARGET_MS = 20

/** GET /q/{code} on its own account's QR_LETTERS letters, interleaved with hello-world. */
async function measureQr(env: BenchEnvironment, gateway: string, helloWorld: string, account: BenchAccount) {
  progress(`GET /q/{code}: ${QR_LETTERS} letters with a tracking URL`)
  const codes = await trackedLetters(env, gateway, account)
  return interleaved(env, {
    hello: { label: 'hello-world', request: { url: helloWorld, requests: [{}] } },
    qr: { label: 'GET /q/{code}', request: qrTarget(gateway, codes, load.connections) },
  })
}

function qrRow({ hello, qr }: Awaited<ReturnType<typeof measureQr>>): Row {
  return httpRow(`GET /q/{code}, ${whole(QR_LETTERS)} codes (302, not followed)`, qr, {
    ratio: percent(qr.requestsPerSecond / hello.requestsPerSecond, 'hello-world'),
    target: target(`p99 ≤ ${QR_P99_TARGET_MS} ms`, qr.p99Ms <= QR_P99_TARGET_MS),
  })
}

/** A request of 1,000 recipients answered within 2 s: a client waits on it as on any other request. */
const BULK_TARGET_MS = 2000

/** POST /cards/bulk on its own account and campaign, the outbox drained between requests. */
async function measureBulkRow(env: BenchEnvironment, gateway: string, account: BenchAccount): Promise<BulkLatency> {
  const campaignId = await createBulkCampaign(gateway, env.adminToken, account)
  const bulk = await measureBulk(gateway, account, campaignId, () => untilOutboxEmpty(env, progress))
  progress(`POST /cards/bulk, ${BULK_RECIPIENTS} recipients: p50 ${ms(bulk.p50Ms)}, max ${ms(bulk.maxMs)}`)
  return bulk
}

function bulkRow(bulk: BulkLatency): Row {
  return {
    measure: `POST /cards/bulk, ${whole(bulk.recipients)} recipients (JSON, one at a time)`,
    result: `max ${ms(bulk.maxMs)} (${bulk.runs} requests)`,
    p50: ms(bulk.p50Ms),
    target: target(`≤ 2 s each`, bulk.maxMs <= BULK_TARGET_MS),
  }
}

/**
 * Rendering on one core, per CPU second (letters per second of one core, a figure that holds on a
 * shared machine): drawing 4 as the baseline, a letter as accepted before designs, and one with a
 * design (its card's file holding the front's artwork page, a signature's paths, a logo and a
 * return address). After a warm-up that keeps compilation out, the three are drawn in turns,
 * RENDER_ROUND letters at a time, and each one's letters and CPU time added up: a machine whose
 * speed drifts while the rows run (a shared one does, by a fifth) slows all three alike.
 */
async function measureRendering(): Promise<Rendering> {
  progress('rendering on one core: drawing 4 (each glyph as its font has it) as the baseline, in turns with today’s drawing, plain and designed')
  const kinds = [{ drawing: 4 as const }, {}, { designed: true }]
  for (const kind of kinds) await measureRenderThroughput({ ...kind, letters: RENDER_ROUND })
  const totals = kinds.map(() => ({ letters: 0, cpuSeconds: 0 }))
  for (let round = 0; round < RENDER_ROUNDS; round++)
    for (const [index, kind] of kinds.entries()) {
      const measured = await measureRenderThroughput({ ...kind, letters: RENDER_ROUND, warmup: 0 })
      totals[index]!.letters += measured.letters
      totals[index]!.cpuSeconds += measured.cpuSeconds
    }
  const [before, plain, designed] = totals.map((total) => total.letters / total.cpuSeconds) as [number, number, number]
  progress(`rendering: drawing 4 ${perSecond(before, 'letters')}, today's ${perSecond(plain, 'letters')}, with a design ${perSecond(designed, 'letters')}`)
  progress('glyph shapes and plotter figures, per hand')
  return { before, plain, designed, twins: await measureTwins(), plotter: measurePlotter() }
}

/** Letters per turn, and turns, of the rendering rows: 1,200 letters of each, some 10 to 15 s of one core. */
const RENDER_ROUND = 50
const RENDER_ROUNDS = 24

interface Rendering {
  before: number
  plain: number
  designed: number
  twins: Awaited<ReturnType<typeof measureTwins>>
  plotter: ReturnType<typeof measurePlotter>
}

function renderRows({ before, plain, designed, twins, plotter }: Rendering): Row[] {
  return [
    {
      measure: 'Rendering, drawing 4 (glyphs as their fonts have them), card + envelope, one core (baseline)',
      result: `${perSecond(before, 'letters')} (${ms(1000 / before)} each)`,
    },
    {
      measure: 'Rendering, card + envelope, one core',
      result: `${perSecond(plain, 'letters')} (${ms(1000 / plain)} each)`,
      ratio: percent(plain / before, 'drawing 4'),
      target: target('≥ 200 letters/s', plain >= 200),
    },
    {
      measure: 'Rendering with a design (front page, signature, logo, return address), one core',
      result: `${perSecond(designed, 'letters')} (${ms(1000 / designed)} each)`,
      ratio: percent(designed / plain, 'without a design'),
      target: target('≥ 200 letters/s', designed >= 200),
    },
    twinRow(twins),
    ...plotterRows(plotter),
  ]
}

/** The table under a line that says when, where and how it was measured. */
function report(rows: Row[]): string {
  const cpu = cpus()
  const header =
    `letters bench, ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${cpu.length} × ${cpu[0]?.model.trim() ?? 'unknown CPU'}, Node ${process.version}; ` +
    `HTTP rows: ${load.connections} connections, ${rounds} rounds of ${load.durationSeconds} s (after ${load.warmUpSeconds} s of warm-up), interleaved with their baselines and averaged`
  return `\n${header}\n\n${markdownTable(rows)}\n`
}

/**
 * `--only lists`: hello-world and the list GETs alone, on 50 accounts of LIST_LETTERS letters
 * each. One letter per account goes through POST /single; the rest are copies of it made in
 * SQL, each a millisecond older than the last, which is all a list read cares about.
 */
async function runLists(cleanup: Cleanup): Promise<string> {
  progress('fresh database, Redis prefix and directory')
  const env = await prepareEnvironment(cleanup, { postgresUrl: args.postgres, redisUrl: args.redis })
  progress(`starting the gateway and hello-world (${env.config.queuePrefix})`)
  const [gateway, helloWorld, bareRead] = await Promise.all([env.startGateway(), env.startBaseline('hello-world'), env.startBaseline('bare-read')])
  progress(`creating accounts through the admin API, ${LIST_LETTERS} letters each`)
  const spread = await spreadAccounts(gateway, env.adminToken)
  await Promise.all(
    spread.map(async (account) => {
      const response = await fetch(`${gateway}/single`, {
        method: 'POST',
        headers: { ...withKey(account), 'content-type': 'application/json' },
        body: JSON.stringify(singleLetter(account)),
      })
      if (!response.ok) throw new Error(`POST /single answered ${response.status}: ${await response.text()}`)
    }),
  )
  await env.sql`
    INSERT INTO letters (account_id, type, campaign_id, card_design_id, envelope_design_id, sender_id, font_name, message, recipient, address, status, cost, created_at, updated_at)
    SELECT l.account_id, l.type, l.campaign_id, l.card_design_id, l.envelope_design_id, l.sender_id, l.font_name, l.message, l.recipient, l.address, l.status, l.cost,
      l.created_at - copy * interval '1 millisecond', l.updated_at - copy * interval '1 millisecond'
    FROM letters l, generate_series(1, ${LIST_LETTERS - 1}) AS copy`
  await env.sql`ANALYZE letters`
  const lists = await measureLists(env, gateway, helloWorld, bareRead, spread)
  return report([httpRow('Fastify hello-world (baseline)', lists.hello), ...listRows(lists)])
}

/** `--only qr`: the gateway, hello-world and the QR link's row alone. */
async function runQr(cleanup: Cleanup): Promise<string> {
  progress('fresh database, Redis prefix and directory')
  const env = await prepareEnvironment(cleanup, { postgresUrl: args.postgres, redisUrl: args.redis })
  progress(`starting the gateway and hello-world (${env.config.queuePrefix})`)
  const [gateway, helloWorld] = await Promise.all([env.startGateway(), env.startBaseline('hello-world')])
  const qr = await measureQr(env, gateway, helloWorld, await createAccount(gateway, env.adminToken, 'Códigos QR'))
  return report([httpRow('Fastify hello-world (baseline)', qr.hello), qrRow(qr)])
}

/** `--only render`: the rendering rows alone, on this process's thread; nothing to set up. */
async function runRender(): Promise<string> {
  return report(renderRows(await measureRendering()))
}

/** What `npm run admin -- --help` should take on a quiet machine: npm's own start, then the compiled CLI's. */
const CLI_HELP_TARGET_MS = 800

/** `--only cli`: the operator CLI's start, no database or Redis; the wall time of each command line, from its start to its exit. */
function runCliStart(): Promise<string> {
  progress(`the CLI's --help and node -e '', ${CLI_RUNS} runs of each in turns`)
  const walls = measureCliStart()
  const result = (wall: WallTimes) => `${ms(wall.medianMs)} median, p90 ${ms(wall.p90Ms)} (${wall.runs} runs)`
  const ofNode = (wall: WallTimes) => times(wall.medianMs / walls.node.medianMs, "node's start")
  return Promise.resolve(
    report([
      { measure: "node -e '' (baseline: node's own start)", result: result(walls.node) },
      {
        measure: 'admin --help, compiled (node --conditions=letters-dist packages/cli/dist/main.js)',
        result: result(walls.compiled),
        ratio: ofNode(walls.compiled),
      },
      {
        measure: 'admin letters --help, compiled (loads the commands of a group and the contracts they print)',
        result: result(walls.group),
        ratio: ofNode(walls.group),
      },
      {
        measure: 'npm run -s admin -- --help (npm, the build check of scripts/admin.mjs, the compiled CLI)',
        result: result(walls.npm),
        ratio: ofNode(walls.npm),
        target: target(`≤ ${CLI_HELP_TARGET_MS} ms on a quiet machine`, walls.npm.medianMs <= CLI_HELP_TARGET_MS),
      },
      { measure: 'admin --help from the sources through tsx (how npm run admin ran it before)', result: result(walls.tsx), ratio: ofNode(walls.tsx) },
    ]),
  )
}

/** `--only bulk`: the gateway alone, and POST /cards/bulk timed on one account. */
async function runBulk(cleanup: Cleanup): Promise<string> {
  progress('fresh database, Redis prefix and directory')
  const env = await prepareEnvironment(cleanup, { postgresUrl: args.postgres, redisUrl: args.redis })
  progress(`starting the gateway (${env.config.queuePrefix})`)
  const gateway = await env.startGateway()
  const account = await createAccount(gateway, env.adminToken, 'Envíos masivos')
  return report([bulkRow(await measureBulkRow(env, gateway, account))])
}

async function run(cleanup: Cleanup): Promise<string> {
  progress('fresh database, Redis prefix and directory')
  const env = await prepareEnvironment(cleanup, { postgresUrl: args.postgres, redisUrl: args.redis })
  progress(`starting the gateway and the baselines (${env.config.queuePrefix})`)
  const [gateway, helloWorld, barePath, bareRead] = await Promise.all([
    env.startGateway(),
    env.startBaseline('hello-world'),
    env.startBaseline('bare-path'),
    env.startBaseline('bare-read'),
  ])

  progress('creating accounts through the admin API')
  const newAccount = (name: string) => createAccount(gateway, env.adminToken, name)
  const spread = await spreadAccounts(gateway, env.adminToken)
  const [hot, pipelineOne, pipelineTwo, bulkAccount, qrAccount] = await Promise.all([
    newAccount('Cuenta caliente'),
    newAccount('Tubería 1'),
    newAccount('Tubería 2'),
    newAccount('Envíos masivos'),
    newAccount('Códigos QR'),
  ])

  const measured = await measureRendering()
  const rendering = { lettersPerSecond: measured.plain }
  const letters = lettersAsked ?? pipelineLetters(rendering.lettersPerSecond)

  progress(`pipeline: ${letters} letters, 1 then 2 production workers`)
  const { oneWorker, twoWorkers } = await measurePipeline(env, gateway, [pipelineOne, pipelineTwo], letters)
  progress(`pipeline: ${figure(oneWorker.seconds)} s with 1 production worker, ${figure(twoWorkers.seconds)} s with 2`)

  progress('proofs')
  const proofLetters = await env.sql<
    Array<{ id: string }>
  >`SELECT id FROM letters WHERE account_id = ${pipelineOne.id} AND address IS NOT NULL LIMIT ${PROOF_LETTERS}`
  const proofs = await measureProofs(
    gateway,
    pipelineOne.apiKey,
    proofLetters.map((row) => row.id),
  )

  progress(`POST /cards/bulk, ${BULK_RECIPIENTS} recipients`)
  const bulk = await measureBulkRow(env, gateway, bulkAccount)

  const { bareSpread, singleSpread } = await interleaved(env, {
    bareSpread: {
      label: 'bare path, 50 accounts',
      request: { url: `${barePath}/single`, method: 'POST', requests: spread.map((account) => ({ body: bareLetter(account) })) },
    },
    singleSpread: {
      label: 'POST /single, 50 accounts',
      request: creationTarget(gateway, spread),
    },
  })
  const { bareHot, singleHot } = await interleaved(env, {
    bareHot: { label: 'bare path, one account', request: { url: `${barePath}/single`, method: 'POST', requests: [{ body: bareLetter(hot) }] } },
    singleHot: {
      label: 'POST /single, one account',
      request: creationTarget(gateway, [hot]),
    },
  })
  const lists = await measureLists(env, gateway, helloWorld, bareRead, spread)
  const qr = await measureQr(env, gateway, helloWorld, qrAccount)

  const renderMs = 1000 / rendering.lettersPerSecond
  const twoThousandSeconds = 2000 / twoWorkers.lettersPerSecond
  const rows: Row[] = [
    httpRow('Fastify hello-world (baseline)', lists.hello),
    httpRow('Bare path, 50 accounts (baseline)', bareSpread),
    httpRow('Bare path, one account (baseline)', bareHot),
    httpRow('POST /single, 50 accounts', singleSpread, {
      ratio: times(singleSpread.requestsPerSecond / bareSpread.requestsPerSecond, 'bare path'),
      target: target('≥ 3×, p99 ≤ 50 ms', singleSpread.requestsPerSecond >= 3 * bareSpread.requestsPerSecond && singleSpread.p99Ms <= 50),
    }),
    httpRow('POST /single, one account', singleHot, {
      ratio: times(singleHot.requestsPerSecond / bareHot.requestsPerSecond, 'bare path'),
      target: target('≥ 5×, p99 ≤ 50 ms', singleHot.requestsPerSecond >= 5 * bareHot.requestsPerSecond && singleHot.p99Ms <= 50),
    }),
    ...listRows(lists),
    qrRow(qr),
    {
      measure: `Proof, fresh (${proofs.samples.fresh}, one at a time)`,
      result: '',
      p50: ms(proofs.freshP50Ms),
      ratio: times(proofs.freshP50Ms / renderMs, 'one render'),
      // A proof is one render plus a query and a file write; 10% allows for the noise of one run.
      target: target('≤ one render (+10%)', proofs.freshP50Ms <= 1.1 * renderMs),
    },
    { measure: `Proof, kept in the store (${proofs.samples.kept})`, result: '', p50: ms(proofs.keptP50Ms), target: target('≤ 20 ms', proofs.keptP50Ms <= 20) },
    ...renderRows(measured),
    bulkRow(bulk),
    {
      measure: `Pipeline, ${letters} letters, 1 production worker`,
      result: `${perSecond(oneWorker.lettersPerSecond, 'letters')} (${figure(oneWorker.seconds)} s in all)`,
    },
    {
      measure: `Pipeline, ${letters} letters, 2 production workers`,
      result: `${perSecond(twoWorkers.lettersPerSecond, 'letters')} (${figure(twoWorkers.seconds)} s in all)`,
      ratio: times(twoWorkers.lettersPerSecond / oneWorker.lettersPerSecond, '1 worker'),
      target: target(
        letters === 2000
          ? `2,000 letters < 30 s (took ${figure(twoWorkers.seconds)} s)`
          : `2,000 letters < 30 s (at this rate ${figure(twoThousandSeconds)} s)`,
        twoThousandSeconds < 30,
      ),
    },
  ]
  return report(rows)
}

/** `--against <ref>`: the table of both releases; a row past the threshold makes the run exit 1 once everything is cleaned up. */
async function runComparison(ref: string, cleanup: Cleanup): Promise<string> {
  const compared = await runAgainst({ ref, servers: { postgresUrl: args.postgres, redisUrl: args.redis }, load, rounds, progress }, cleanup)
  if (compared.slower.length > 0) exitCode = 1
  const cpu = cpus()
  const header =
    `letters bench --against ${ref}, ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${cpu.length} × ${cpu[0]?.model.trim() ?? 'unknown CPU'}, Node ${process.version}; ` +
    `${load.connections} connections, ${rounds} rounds of ${load.durationSeconds} s a row and release (after ${load.warmUpSeconds} s of warm-up), in turn, averaged`
  return `\n${header}\n\n${compared.table}`
}

const cleanup = new Cleanup()
cleanup.closeOnSignals()
let exitCode = 0
try {
  const sections: Record<string, (cleanup: Cleanup) => Promise<string>> = { lists: runLists, bulk: runBulk, render: runRender, qr: runQr, cli: runCliStart }
  const table = await (historyLetters !== undefined
    ? runHistoryBench({ letters: historyLetters, postgresUrl: args.postgres, redisUrl: args.redis, progress }, cleanup)
    : args.against !== undefined
      ? runComparison(args.against, cleanup)
      : args.only === undefined
        ? run(cleanup)
        : sections[args.only]!(cleanup))
  progress('stopping everything and removing the run’s data')
  await cleanup.close()
  process.stdout.write(table)
  progress(`done in ${((performance.now() - began) / 1000).toFixed(0)} s`)
} catch (error) {
  // After Ctrl-C, the failures that follow (its servers gone) say nothing new.
  if (!cleanup.interruptedBy) process.stderr.write(`\nbench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
  exitCode = cleanup.interruptedBy ? 130 : 1
  await cleanup.close()
}
process.exit(exitCode)
