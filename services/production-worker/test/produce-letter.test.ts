import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect } from 'vitest'
import { asc, eq } from 'drizzle-orm'
import { pino } from 'pino'
import { normalizeAddress } from '@letters/address'
import { letterEvents, letters, printHandoffs, type Db, type LetterStatus } from '@letters/db'
import { newLetter, sampleRecipient, type newCompanyData } from '@letters/test/support/factories'
import { it as base } from '@letters/test/support/fixtures'
import { LocalArtifactStore } from '@letters/artifacts'
import { SpoolPrinter, type PrintFile, type Printer } from '../src/printer.js'
import { handOver } from '../src/print-handoffs.js'
import { markFailed, produceLetter, recordFailedAttempt, TEST_RENDERED_DETAIL } from '../src/produce-letter.js'
import type { Floor } from '../src/floor.js'

const it = base
  /** The floor's directory, named after the file: its artifact store and its printer's spool. */
  .extend('directory', { scope: 'file' }, async ({ databaseLabel }, { onCleanup }) => {
    const directory = await mkdtemp(join(tmpdir(), `letters-${databaseLabel}-`))
    onCleanup(() => rm(directory, { recursive: true, force: true }))
    return directory
  })
  /** The floor in spool mode, on the file's database. */
  .extend('floor', { scope: 'file' }, ({ database, directory }): Floor => ({
    db: database,
    log: pino({ level: 'silent' }),
    printTimeoutMs: 10_000,
    floorCountry: 'ES',
    store: new LocalArtifactStore(join(directory, 'artifacts')),
    printer: new SpoolPrinter(join(directory, 'spool')),
  }))

it.override({ databaseLabel: 'floor' })

type Owner = { accountId: string; company: Awaited<ReturnType<typeof newCompanyData>> }

const readyLetter = (db: Db, { accountId, company }: Owner, status: LetterStatus = 'ready_for_print', livemode = true) =>
  newLetter(db, accountId, company, {
    status,
    livemode,
    message: 'Gracias por tu pedido, Lucía',
    address: { ...normalizeAddress(sampleRecipient), verifiedBy: 'offline' },
  })

const statusOf = async (db: Db, id: string) => (await db.select({ status: letters.status }).from(letters).where(eq(letters.id, id)))[0]?.status
const eventsOf = (db: Db, id: string) => db.select().from(letterEvents).where(eq(letterEvents.letterId, id)).orderBy(asc(letterEvents.id))
const spooled = async (directory: string) => (await readdir(join(directory, 'spool')).catch(() => [])).filter((name) => !name.startsWith('.'))

/** A printer that fails the first `failures` files it is given. */
function flakyPrinter(directory: string, failures: number): Printer & { calls: number } {
  const spool = new SpoolPrinter(join(directory, 'spool'))
  return {
    name: 'flaky',
    calls: 0,
    async print(file) {
      this.calls++
      if (this.calls <= failures) throw new Error('the printer is out of paper')
      await spool.print(file)
    },
  }
}

/** The spool printer, counting how often each file reached it; `jam` refuses the files it matches. */
function countingPrinter(directory: string, jam: (file: PrintFile) => boolean = () => false): Printer & { prints: Map<string, number> } {
  const spool = new SpoolPrinter(join(directory, 'spool'))
  const prints = new Map<string, number>()
  return {
    name: 'floor-1',
    prints,
    async print(file) {
      if (jam(file)) throw new Error('floor-1: envelope feeder jammed')
      await spool.print(file)
      prints.set(file.name, (prints.get(file.name) ?? 0) + 1)
    },
  }
}

/** A printer that holds every file until the test releases it (a worker stalled in the printer). */
function heldPrinter(directory: string): Printer & { printed: string[]; reached: Promise<void>; release: () => void } {
  const spool = new SpoolPrinter(join(directory, 'spool'))
  let reach!: () => void
  let release!: () => void
  const reached = new Promise<void>((resolve) => (reach = resolve))
  const released = new Promise<void>((resolve) => (release = resolve))
  const printed: string[] = []
  return {
    name: 'floor-2',
    printed,
    reached,
    release,
    async print(file) {
      reach()
      await released
      await spool.print(file)
      printed.push(file.name)
    },
  }
}

const handoffsOf = async (db: Db, id: string) =>
  (await db.select().from(printHandoffs).where(eq(printHandoffs.letterId, id))).map((row) => [row.file, row.claim, row.printer]).sort()

describe('produceLetter', () => {
  it('prints a ready letter: printing, then printed, with card and envelope in the store and the spool', async ({ database: db, floor, directory, owner }) => {
    const letter = await readyLetter(db, owner)
    expect(await produceLetter(floor, letter.id)).toBe('printed')
    expect(await statusOf(db, letter.id)).toBe('printed')
    expect((await eventsOf(db, letter.id)).map((event) => event.status)).toEqual(['printing', 'printed'])
    const card = await floor.store.get(`${letter.id}/card.pdf`)
    expect(card?.subarray(0, 5).toString()).toBe('%PDF-')
    expect(await floor.store.get(`${letter.id}/envelope.pdf`)).toBeDefined()
    expect(await spooled(directory)).toEqual(expect.arrayContaining([`${letter.id}.card.pdf`, `${letter.id}.envelope.pdf`]))
    expect((await readFile(join(directory, 'spool', `${letter.id}.card.pdf`))).equals(card!)).toBe(true)
  })

  it('changes nothing when the job runs a second time', async ({ database: db, floor, directory, owner }) => {
    const letter = await readyLetter(db, owner)
    await produceLetter(floor, letter.id)
    const events = await eventsOf(db, letter.id)
    const printedAt = (await stat(join(directory, 'spool', `${letter.id}.card.pdf`))).mtimeMs
    expect(await produceLetter(floor, letter.id)).toBe('already_done')
    expect(await eventsOf(db, letter.id)).toEqual(events)
    expect((await stat(join(directory, 'spool', `${letter.id}.card.pdf`))).mtimeMs).toBe(printedAt)
  })

  it.for(['cancelled', 'mailed', 'address_rejected'] as const)(
    'skips a %s letter without printing it',
    async (status, { database: db, floor, directory, owner }) => {
      const letter = await readyLetter(db, owner, status)
      expect(await produceLetter(floor, letter.id)).toBe('already_done')
      expect(await statusOf(db, letter.id)).toBe(status)
      expect(await eventsOf(db, letter.id)).toEqual([])
      expect(await spooled(directory)).not.toContain(`${letter.id}.card.pdf`)
    },
  )

  it('leaves the letter printing when the printer fails, and the retry prints it', async ({ database: db, floor, directory, owner }) => {
    const letter = await readyLetter(db, owner)
    const printer = flakyPrinter(directory, 1)
    await expect(produceLetter({ ...floor, printer }, letter.id)).rejects.toThrow('out of paper')
    expect(await statusOf(db, letter.id)).toBe('printing')
    expect(await produceLetter({ ...floor, printer }, letter.id)).toBe('printed')
    expect((await eventsOf(db, letter.id)).map((event) => [event.status, event.detail])).toEqual([
      ['printing', 'En producción'],
      ['printing', 'En producción de nuevo: el intento anterior no terminó'],
      ['printed', 'Entregada a la impresora (flaky): tarjeta y sobre'],
    ])
  })

  it('marks a letter failed after the last attempt, and an ops retry prints it', async ({ database: db, floor, directory, owner }) => {
    const letter = await readyLetter(db, owner)
    await expect(produceLetter({ ...floor, printer: flakyPrinter(directory, 1) }, letter.id)).rejects.toThrow()
    expect(await markFailed(db, letter.id, 4, 'any')).toBe(true)
    expect(await statusOf(db, letter.id)).toBe('failed')
    expect(await markFailed(db, letter.id, 4, 'any')).toBe(false)
    expect(await produceLetter(floor, letter.id)).toBe('printed')
    expect((await eventsOf(db, letter.id)).map((event) => event.status)).toEqual(['printing', 'failed', 'printing', 'printed'])
  })

  it('fails for good on a letter that does not exist', async ({ floor }) => {
    await expect(produceLetter(floor, '00000000-0000-4000-8000-000000000000')).rejects.toMatchObject({ name: 'UnrecoverableError' })
  })
})

describe('produceLetter with a test letter', () => {
  it('renders and keeps card and envelope, hands nothing to the printer and marks it printed as a test letter', async ({
    database: db,
    floor,
    directory,
    owner,
  }) => {
    const letter = await readyLetter(db, owner, 'ready_for_print', false)
    const printer = countingPrinter(directory)
    expect(await produceLetter({ ...floor, printer }, letter.id)).toBe('rendered')
    expect(await statusOf(db, letter.id)).toBe('printed')
    expect((await eventsOf(db, letter.id)).map((event) => [event.status, event.detail])).toEqual([
      ['printing', 'En producción'],
      ['printed', TEST_RENDERED_DETAIL],
    ])
    expect((await floor.store.get(`${letter.id}/card.pdf`))?.subarray(0, 5).toString()).toBe('%PDF-')
    expect((await floor.store.get(`${letter.id}/envelope.pdf`))?.subarray(0, 5).toString()).toBe('%PDF-')
    expect([...printer.prints]).toEqual([])
    expect((await spooled(directory)).filter((name) => name.startsWith(letter.id))).toEqual([])
    expect(await handoffsOf(db, letter.id)).toEqual([])
  })

  it('renders a failed test letter again on an ops retry, still without printing it', async ({ database: db, floor, directory, owner }) => {
    const letter = await readyLetter(db, owner, 'failed', false)
    const printer = countingPrinter(directory)
    expect(await produceLetter({ ...floor, printer }, letter.id)).toBe('rendered')
    expect((await eventsOf(db, letter.id)).map((event) => event.status)).toEqual(['printing', 'printed'])
    expect([...printer.prints]).toEqual([])
    expect(await handoffsOf(db, letter.id)).toEqual([])
  })

  it('is refused by handOver itself, which records nothing', async ({ database: db, floor, directory, owner }) => {
    const letter = await readyLetter(db, owner, 'printing', false)
    const printer = countingPrinter(directory)
    const file = { name: `${letter.id}.card.pdf`, data: Buffer.from('%PDF-'), location: join(directory, 'x.pdf') }
    await expect(handOver({ ...floor, printer }, letter.id, letter.printClaim, file, [file.name])).rejects.toMatchObject({
      name: 'UnrecoverableError',
      message: expect.stringMatching(/test letter/),
    })
    expect([...printer.prints]).toEqual([])
    expect(await handoffsOf(db, letter.id)).toEqual([])
  })
})

describe('fencing the floor', () => {
  it('prints only the envelope when a letter failed after its card was printed, without rewriting the spooled card', async ({
    database: db,
    floor,
    directory,
    owner,
  }) => {
    const letter = await readyLetter(db, owner)
    const jammed = countingPrinter(directory, (file) => file.name.endsWith('.envelope.pdf'))
    let claim: number | undefined
    await expect(produceLetter({ ...floor, printer: jammed }, letter.id, (taken) => (claim = taken))).rejects.toThrow('jammed')
    expect(await markFailed(db, letter.id, 4, claim!)).toBe(true)
    const cardSpooledAt = (await stat(join(directory, 'spool', `${letter.id}.card.pdf`))).mtimeMs

    // Ops retry it once the feeder is fixed.
    const fixed = countingPrinter(directory)
    expect(await produceLetter({ ...floor, printer: fixed }, letter.id)).toBe('printed')
    expect([...jammed.prints]).toEqual([[`${letter.id}.card.pdf`, 1]])
    expect([...fixed.prints]).toEqual([[`${letter.id}.envelope.pdf`, 1]])
    expect((await stat(join(directory, 'spool', `${letter.id}.card.pdf`))).mtimeMs).toBe(cardSpooledAt)
    expect(await handoffsOf(db, letter.id)).toEqual([
      [`${letter.id}.card.pdf`, 1, 'floor-1'],
      [`${letter.id}.envelope.pdf`, 2, 'floor-1'],
    ])
  })

  it('stops a run whose claim was superseded: it hands over nothing more and cannot mark the letter printed', async ({
    database: db,
    floor,
    directory,
    owner,
  }) => {
    const letter = await readyLetter(db, owner)
    const stalled = heldPrinter(directory)
    const staleRun = produceLetter({ ...floor, printer: stalled }, letter.id)
    await stalled.reached
    // Its worker looked dead (lock expired): another one takes the letter over meanwhile.
    const takeover = countingPrinter(directory)
    const takeoverRun = produceLetter({ ...floor, printer: takeover }, letter.id)
    await expect.poll(async () => (await eventsOf(db, letter.id)).length, { timeout: 5000, interval: 20 }).toBe(2)
    stalled.release()
    expect(await takeoverRun).toBe('printed')
    expect(await staleRun).toBe('superseded')
    // The card the stale run had in the printer counts as printed: the takeover waited for it
    // and sent only the envelope. Each file reached the floor once.
    expect(stalled.printed).toEqual([`${letter.id}.card.pdf`])
    expect([...takeover.prints]).toEqual([[`${letter.id}.envelope.pdf`, 1]])
    expect((await eventsOf(db, letter.id)).map((event) => event.status)).toEqual(['printing', 'printing', 'printed'])
    expect(await handoffsOf(db, letter.id)).toEqual([
      [`${letter.id}.card.pdf`, 1, 'floor-2'],
      [`${letter.id}.envelope.pdf`, 2, 'floor-1'],
    ])
  })

  it('lets a superseded run neither fail the letter nor add to its history while the new run prints it', async ({ database: db, floor, directory, owner }) => {
    const letter = await readyLetter(db, owner)
    let staleClaim: number | undefined
    await expect(
      produceLetter(
        { ...floor, printer: countingPrinter(directory, (file) => file.name.endsWith('.envelope.pdf')) },
        letter.id,
        (taken) => (staleClaim = taken),
      ),
    ).rejects.toThrow('jammed')
    const current = heldPrinter(directory)
    const currentRun = produceLetter({ ...floor, printer: current }, letter.id)
    await current.reached
    // The first run's failure bookkeeping arrives late, while the letter is in the new run's hands.
    expect(await markFailed(db, letter.id, 4, staleClaim!)).toBe(false)
    await recordFailedAttempt(db, letter.id, staleClaim!, 1, 4)
    expect(await statusOf(db, letter.id)).toBe('printing')
    current.release()
    expect(await currentRun).toBe('printed')
    expect(current.printed).toEqual([`${letter.id}.envelope.pdf`])
    expect((await eventsOf(db, letter.id)).map((event) => event.status)).toEqual(['printing', 'printing', 'printed'])
  })
})
