// The floor under faults, printing each file once: Two batch-printing workers (one killed mid-batch, then replaced), the
// queue prefix's Redis keys deleted while letters sit in trays, every client backend terminated during
// a burst of scans and while a batch closes, and a scanner scanning every printed letter twice at once.
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, onTestFinished } from 'vitest'
import { and, eq, inArray } from 'drizzle-orm'
import { terminateClientBackends } from '@letters/test/support/context'
import { letterEvents, letters, printBatchHandoffs, printBatches, printBatchLetters, webhookEvents } from '@letters/db'
import { batchLetter, lapseKilledCloserLease } from '@letters/test/support/batches'
import { batchHeldAt, firstHeldGate, loggingCommand, printsIn, processesMentioning } from '@letters/test/support/floor-processes'
import { startFloorProcess, type ServiceProcess } from '@letters/test/support/processes'
import { deleteKeys } from '@letters/test/support/redis-keys'
import { it as base } from '@letters/test/support/fixtures'

const FLOOR_TOKEN = 'floor-token-redteam-0123456789'
const LETTERS = 40
// The print timeout as in production (two minutes). The kill must land while a command holds
// the envelopes, after the test has looked at the gates and terminated every backend, which on a
// loaded machine can take longer than a short timeout: the worker would end the command first.
// It also makes the killed closer's lease (the print timeout and 30 s) outlast the rounds of
// terminations below, which need a batch still closing; the test then ends that lease by hand.
const batchEnv = { PRINTER: 'batch', BATCH_MAX_LETTERS: '10', BATCH_MAX_WAIT_MS: '4000', PRINT_TIMEOUT_MS: '120000' }

const it = base.extend({
  pipelineOptions: {
    label: 'rtfloor',
    production: false,
    reconcile: true,
    env: { FLOOR_TOKEN, RATE_LIMIT_MAX: '100000', RECONCILE_AFTER_MS: '3000', RECONCILE_INTERVAL_MS: '1000' },
  },
})

// The floor processes: killed in afterAll, before the file's pipeline is closed.
const workers: ServiceProcess[] = []
let floorDir: string | undefined
afterAll(async () => {
  for (const worker of workers.splice(0)) await worker.kill()
  if (floorDir) await rm(floorDir, { recursive: true, force: true })
})

const count = <T>(items: T[]) => items.reduce((acc, item) => acc.set(item, (acc.get(item) ?? 0) + 1), new Map<T, number>())

describe('the floor through a killed worker, lost Redis keys and terminated connections', () => {
  // 40 letters drawn and scanned, three worker processes started, a batch taken over: about a
  // minute alone, several times that on a loaded machine. Each wait below has a ceiling that
  // only a hang reaches.
  it('puts every letter in one batch, hands each file once, and mails every scanned letter once', { timeout: 900_000 }, async ({ pipeline }) => {
    const { app, account, config } = pipeline
    const db = app.db
    floorDir = await mkdtemp(join(tmpdir(), 'letters-rtfloor-prints-'))
    const log = join(floorDir, 'prints.log')
    const names = ['rtfloor-a', 'rtfloor-b']
    // Each worker's printer takes a batch's cards at once and holds its envelopes at the worker's
    // own gate, closed until the kill: the worker killed is mid-batch, and cannot print meanwhile.
    const gates = names.map((name) => join(floorDir!, `${name}.gate`))
    for (const [i, name] of names.entries())
      workers.push(
        await startFloorProcess(config, { ...batchEnv, PRINT_COMMAND: loggingCommand(log, { gate: gates[i], envelopesOnly: true }), PGAPPNAME: name }),
      )
    const hook = await pipeline.client('POST', '/webhooks', { url: 'https://93.184.216.34/hooks/floor' })
    expect(hook.statusCode, hook.body).toBe(201)
    expect((await pipeline.admin('POST', `/admin/accounts/${account.id}/credits`, { amount: 500, reason: 'lotes' })).statusCode).toBe(200)
    const ids: string[] = []
    for (let from = 0; from < LETTERS; from += 20) ids.push(...(await Promise.all(Array.from({ length: 20 }, (_, i) => pipeline.send(batchLetter(from + i))))))
    // Redis loses the prefix's keys while letters are queued and in trays.
    await deleteKeys(config.redisUrl, `${config.queuePrefix}:*`)

    const terminate = () => terminateClientBackends(config.databaseUrl)
    // The scanner: every printed letter, twice at once, as long as the test runs.
    const answers: Array<{ id: string; status: number }> = []
    const terminated: number[] = []
    let scanning = true
    let bursts = 0
    // Stopped below; also when the test fails first, so that it scans nothing of the next file's.
    onTestFinished(async () => {
      scanning = false
      await scanner.catch(() => undefined)
    })
    const scanner = (async () => {
      while (scanning) {
        const printed = await db
          .select({ id: letters.id, code: letters.code })
          .from(letters)
          .where(and(inArray(letters.id, ids), eq(letters.status, 'printed')))
          .catch(() => [])
        // Every other burst, every client backend is terminated while its scans are in flight.
        const kill = printed.length > 0 && bursts++ % 2 === 0 ? [terminate().then((n) => terminated.push(n))] : []
        await Promise.all([
          ...kill,
          ...printed.flatMap((letter) =>
            [0, 1].map(async () => {
              const answer = await app.inject({
                method: 'POST',
                url: '/floor/scan',
                headers: { authorization: `Bearer ${FLOOR_TOKEN}` },
                payload: { code: letter.code },
              })
              answers.push({ id: letter.id, status: answer.statusCode })
            }),
          ),
        ])
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
    })()

    // Kill (SIGKILL) the first worker whose printer holds a batch's envelopes, its cards handed
    // over, once every client backend was terminated while it holds them: its closer's lock goes
    // with its connection, and the lease keeps its batch.
    await expect.poll(() => firstHeldGate(gates), { timeout: 300_000, interval: 20 }).toBeGreaterThanOrEqual(0)
    const heldBy = await firstHeldGate(gates)
    expect((await db.select().from(printBatchHandoffs)).length).toBeGreaterThan(0)
    terminated.push(await terminate())
    const holder = names[heldBy]!
    const killed = workers[heldBy]!
    await killed.kill()
    expect(await killed.exited).toBe('SIGKILL')
    const killedBatch = await batchHeldAt(gates[heldBy]!)
    expect(killedBatch).toBeDefined()
    // The watchdog ends the killed worker's print commands; then the printers answer again. A
    // command it missed would hold the envelopes until the gate opens, and print them then.
    await expect.poll(() => processesMentioning(gates[heldBy]!), { timeout: 60_000, interval: 20 }).toEqual([])
    for (const gate of gates) await writeFile(gate, '')
    // A replacement, so two closers are at work while the connections drop.
    workers.push(await startFloorProcess(config, { ...batchEnv, PRINT_COMMAND: loggingCommand(log, { before: 1 }), PGAPPNAME: 'rtfloor-c' }))
    console.log(`### killed worker: ${holder}`)
    // And while a batch is closing.
    for (let round = 0; round < 3; round++) {
      await expect
        .poll(
          async () =>
            (
              await db
                .select({ id: printBatches.id })
                .from(printBatches)
                .where(eq(printBatches.status, 'closing'))
                .catch(() => [])
            ).length,
          {
            timeout: 120_000,
            interval: 50,
          },
        )
        .toBeGreaterThan(0)
      terminated.push(await terminate())
      await new Promise((resolve) => setTimeout(resolve, 700))
    }

    // The killed closer's batch has been closing all along, kept by its lease: its time passes now.
    expect(await lapseKilledCloserLease(db, killedBatch!, holder), 'the killed closer still held its lease').toBe(true)

    // Every letter ends mailed (the scanner keeps scanning what gets printed).
    await expect
      .poll(
        async () => (await db.select({ status: letters.status }).from(letters).where(inArray(letters.id, ids))).filter((l) => l.status === 'mailed').length,
        {
          // A closer sends its release again on a new connection when one is cut under it, a few
          // times; one whose every attempt fell in a round of terminations leaves its lease to
          // pass (PRINT_TIMEOUT_MS + 30 s), on a loaded machine more than once.
          timeout: 600_000,
          interval: 500,
        },
      )
      .toBe(LETTERS)
    scanning = false
    await scanner

    const memberships = await db.select({ letterId: printBatchLetters.letterId, batchId: printBatchLetters.batchId }).from(printBatchLetters)
    expect(memberships.map((m) => m.letterId).sort()).toEqual([...ids].sort())
    const batches = await db.select().from(printBatches)
    expect(batches.every((batch) => batch.status === 'handed')).toBe(true)
    const handoffs = await db.select({ batchId: printBatchHandoffs.batchId, file: printBatchHandoffs.file }).from(printBatchHandoffs)
    expect(handoffs).toHaveLength(3 * batches.length)
    const prints = await printsIn(log)
    expect(
      [...prints.values()].every((n) => n === 1),
      JSON.stringify([...prints]),
    ).toBe(true)
    expect(prints.size).toBe(3 * batches.length)

    const mailed = await db
      .select({ letterId: letterEvents.letterId })
      .from(letterEvents)
      .where(and(inArray(letterEvents.letterId, ids), eq(letterEvents.status, 'mailed')))
    expect([...count(mailed.map((e) => e.letterId)).values()]).toEqual(Array<number>(LETTERS).fill(1))
    const hooks = await db.select({ type: webhookEvents.type, body: webhookEvents.body }).from(webhookEvents).where(eq(webhookEvents.type, 'letter.mailed'))
    const hooked = count(hooks.map((h) => (JSON.parse(h.body) as { data: { id: string } }).data.id))
    expect([...hooked.keys()].sort()).toEqual([...ids].sort())
    expect([...hooked.values()].every((n) => n === 1)).toBe(true)
    const oks = count(answers.filter((a) => a.status === 200).map((a) => a.id))
    expect([...oks.values()].every((n) => n === 1)).toBe(true)
    console.log(
      `### letters ${LETTERS}, batches ${batches.map((b) => b.letterCount).join('+')}, terminated backends ${terminated.join('/')}, scans ${answers.length}: ${JSON.stringify(Object.fromEntries(count(answers.map((a) => a.status))))}, letters with a 200: ${oks.size}`,
    )
  })
})
