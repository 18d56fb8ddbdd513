import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { asc, eq } from 'drizzle-orm'
import { normalizeAddress } from '@letters/address'
import { closeDb, createDb, letterEvents, letters, type Db, type LetterStatus } from '@letters/db'
import { testConfig } from '@letters/test/support/context'
import { newAccount, newCompanyData, newLetter, sampleRecipient } from '@letters/test/support/factories'
import { LocalArtifactStore } from '@letters/artifacts'
import { SpoolPrinter, type Printer } from '../src/printer.js'
import { markFailed, produceLetter, type Floor } from '../src/produce-letter.js'

let db: Db
let directory: string
let floor: Floor
let company: Awaited<ReturnType<typeof newCompanyData>>
let accountId: string

beforeAll(async () => {
  db = createDb(testConfig().databaseUrl)
  directory = await mkdtemp(join(tmpdir(), 'letters-floor-'))
  floor = { db, store: new LocalArtifactStore(join(directory, 'artifacts')), printer: new SpoolPrinter(join(directory, 'spool')) }
  accountId = (await newAccount(db)).id
  company = await newCompanyData(db, accountId)
})
afterAll(async () => {
  await closeDb(db)
  await rm(directory, { recursive: true, force: true })
})

const readyLetter = (status: LetterStatus = 'ready_for_print') =>
  newLetter(db, accountId, company, { status, message: 'Gracias por tu pedido, Lucía', address: { ...normalizeAddress(sampleRecipient), verifiedBy: 'offline' } })

const statusOf = async (id: string) => (await db.select({ status: letters.status }).from(letters).where(eq(letters.id, id)))[0]?.status
const eventsOf = (id: string) => db.select().from(letterEvents).where(eq(letterEvents.letterId, id)).orderBy(asc(letterEvents.id))
const spooled = async () => (await readdir(join(directory, 'spool')).catch(() => [])).filter((name) => !name.startsWith('.'))

/** A printer that fails the first `failures` times it is called. */
function flakyPrinter(failures: number): Printer & { calls: number } {
  const spool = new SpoolPrinter(join(directory, 'spool'))
  return {
    name: 'flaky',
    calls: 0,
    async print(files) {
      this.calls++
      if (this.calls <= failures) throw new Error('the printer is out of paper')
      await spool.print(files)
    },
  }
}

describe('produceLetter', () => {
  it('prints a ready letter: printing, then printed, with card and envelope in the store and the spool', async () => {
    const letter = await readyLetter()
    expect(await produceLetter(floor, letter.id)).toBe('printed')
    expect(await statusOf(letter.id)).toBe('printed')
    expect((await eventsOf(letter.id)).map((event) => event.status)).toEqual(['printing', 'printed'])
    const card = await floor.store.get(`${letter.id}/card.pdf`)
    expect(card?.subarray(0, 5).toString()).toBe('%PDF-')
    expect(await floor.store.get(`${letter.id}/envelope.pdf`)).toBeDefined()
    expect(await spooled()).toEqual(expect.arrayContaining([`${letter.id}.card.pdf`, `${letter.id}.envelope.pdf`]))
    expect((await readFile(join(directory, 'spool', `${letter.id}.card.pdf`))).equals(card!)).toBe(true)
  })

  it('changes nothing when the job runs a second time', async () => {
    const letter = await readyLetter()
    await produceLetter(floor, letter.id)
    const events = await eventsOf(letter.id)
    const printedAt = (await stat(join(directory, 'spool', `${letter.id}.card.pdf`))).mtimeMs
    expect(await produceLetter(floor, letter.id)).toBe('already_done')
    expect(await eventsOf(letter.id)).toEqual(events)
    expect((await stat(join(directory, 'spool', `${letter.id}.card.pdf`))).mtimeMs).toBe(printedAt)
  })

  it.each(['cancelled', 'mailed', 'address_rejected'] as const)('skips a %s letter without printing it', async (status) => {
    const letter = await readyLetter(status)
    expect(await produceLetter(floor, letter.id)).toBe('already_done')
    expect(await statusOf(letter.id)).toBe(status)
    expect(await eventsOf(letter.id)).toEqual([])
    expect(await spooled()).not.toContain(`${letter.id}.card.pdf`)
  })

  it('leaves the letter printing when the printer fails, and the retry prints it', async () => {
    const letter = await readyLetter()
    const printer = flakyPrinter(1)
    await expect(produceLetter({ ...floor, printer }, letter.id)).rejects.toThrow('out of paper')
    expect(await statusOf(letter.id)).toBe('printing')
    expect(await produceLetter({ ...floor, printer }, letter.id)).toBe('printed')
    expect((await eventsOf(letter.id)).map((event) => [event.status, event.detail])).toEqual([
      ['printing', 'En producción'],
      ['printing', 'En producción de nuevo: el intento anterior no terminó'],
      ['printed', 'Entregada a la impresora (flaky): tarjeta y sobre'],
    ])
  })

  it('marks a letter failed after the last attempt, and an ops retry prints it', async () => {
    const letter = await readyLetter()
    await expect(produceLetter({ ...floor, printer: flakyPrinter(1) }, letter.id)).rejects.toThrow()
    expect(await markFailed(db, letter.id, 4)).toBe(true)
    expect(await statusOf(letter.id)).toBe('failed')
    expect(await markFailed(db, letter.id, 4)).toBe(false)
    expect(await produceLetter(floor, letter.id)).toBe('printed')
    expect((await eventsOf(letter.id)).map((event) => event.status)).toEqual(['printing', 'failed', 'printing', 'printed'])
  })

  it('fails for good on a letter that does not exist', async () => {
    await expect(produceLetter(floor, '00000000-0000-4000-8000-000000000000')).rejects.toMatchObject({ name: 'UnrecoverableError' })
  })
})
