import { access, mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { eq } from 'drizzle-orm'
import { pino } from 'pino'
import { normalizeAddress } from '@letters/address'
import { LocalArtifactStore, type ArtifactStore } from '@letters/artifacts'
import { closeDb, createDb, letters, type Db, type LetterStatus } from '@letters/db'
import { testConfig } from '@letters/test/support/context'
import { newAccount, newCompanyData, newLetter, sampleRecipient } from '@letters/test/support/factories'
import { SpoolPrinter } from '../src/printer.js'
import { produceLetter, type Floor } from '../src/produce-letter.js'
import { erasePersonalData, letterFolder, moveLetter, recordLetterArtifactsRemoved } from '@letters/letters'

let db: Db
let directory: string
let local: LocalArtifactStore
let company: Awaited<ReturnType<typeof newCompanyData>>
let accountId: string

beforeAll(async () => {
  db = createDb(testConfig().databaseUrl)
  directory = await mkdtemp(join(tmpdir(), 'letters-erased-floor-'))
  local = new LocalArtifactStore(join(directory, 'artifacts'))
  accountId = (await newAccount(db)).id
  company = await newCompanyData(db, accountId)
})
afterAll(async () => {
  await closeDb(db)
  await rm(directory, { recursive: true, force: true })
})

const floorWith = (store: ArtifactStore): Floor => ({
  db,
  log: pino({ level: 'silent' }),
  printTimeoutMs: 10_000,
  floorCountry: 'ES',
  store,
  printer: new SpoolPrinter(join(directory, 'spool')),
})

const letterIn = (status: LetterStatus) =>
  newLetter(db, accountId, company, { status, message: 'Gracias, Lucía', address: { ...normalizeAddress(sampleRecipient), verifiedBy: 'offline' } })

const rowOf = async (id: string) => (await db.select().from(letters).where(eq(letters.id, id)))[0]!
const kept = (id: string) =>
  access(join(directory, 'artifacts', letterFolder(id))).then(
    () => true,
    () => false,
  )
const spooled = async (id: string) => (await readdir(join(directory, 'spool')).catch(() => [] as string[])).filter((name) => name.startsWith(id))

describe('the floor and an erased letter', () => {
  it('a run overtaken while it draws (another run printed the letter, which was then erased) leaves none of its files behind', async () => {
    const letter = await letterIn('ready_for_print')
    let overtaken = false
    // Before this run's first file is kept: another run takes the letter over and prints it, the
    // letter is erased, and the eraser removes its files. This run then keeps what it drew.
    const store: ArtifactStore = {
      name: 'overtaken',
      get: (key) => local.get(key),
      removeFolder: (folder) => local.removeFolder(folder),
      async put(key, data) {
        if (!overtaken) {
          overtaken = true
          await db.transaction(async (tx) => {
            await moveLetter(tx, letter.id, { from: 'printing', to: 'printing', printClaim: 'next', detail: null })
            await moveLetter(tx, letter.id, { from: 'printing', to: 'printed', detail: null })
            expect(await erasePersonalData(tx, eq(letters.id, letter.id), { limit: 1, lock: 'wait' })).toEqual([letter.id])
          })
          await local.removeFolder(letterFolder(letter.id))
          await recordLetterArtifactsRemoved(db, [letter.id])
        }
        return local.put(key, data)
      },
    }
    expect(await produceLetter(floorWith(store), letter.id)).toBe('superseded')
    expect(await kept(letter.id)).toBe(false)
    expect(await spooled(letter.id)).toEqual([])
    expect(await rowOf(letter.id)).toMatchObject({ status: 'printed', artifactsRemovedAt: expect.any(Date) })
  })

  it('never claims an erased failed letter again: nothing drawn, nothing printed', async () => {
    const letter = await letterIn('failed')
    await db.transaction((tx) => erasePersonalData(tx, eq(letters.id, letter.id), { limit: 1, lock: 'wait' }))
    const before = await rowOf(letter.id)
    expect(await produceLetter(floorWith(local), letter.id)).toBe('already_done')
    expect(await rowOf(letter.id)).toEqual(before)
    expect(await kept(letter.id)).toBe(false)
    expect(await spooled(letter.id)).toEqual([])
  })
})
