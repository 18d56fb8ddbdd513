import { access, mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect } from 'vitest'
import { eq } from 'drizzle-orm'
import { pino } from 'pino'
import { normalizeAddress } from '@letters/address'
import { LocalArtifactStore, type ArtifactStore } from '@letters/artifacts'
import { letters, type Db, type LetterStatus } from '@letters/db'
import { newLetter, sampleRecipient, type newCompanyData } from '@letters/test/support/factories'
import { it as base } from '@letters/test/support/fixtures'
import { SpoolPrinter } from '../src/printer.js'
import { produceLetter } from '../src/produce-letter.js'
import type { Floor } from '../src/floor.js'
import { erasePersonalData, letterFolder, moveLetter, recordLetterArtifactsRemoved } from '@letters/letters'

const it = base
  /** The floor's directory, named after the file: its artifact store and its printer's spool. */
  .extend('directory', { scope: 'file' }, async ({ databaseLabel }, { onCleanup }) => {
    const directory = await mkdtemp(join(tmpdir(), `letters-${databaseLabel}-`))
    onCleanup(() => rm(directory, { recursive: true, force: true }))
    return directory
  })
  /** The floor's artifact store, in that directory. */
  .extend('local', { scope: 'file' }, ({ directory }) => new LocalArtifactStore(join(directory, 'artifacts')))

it.override({ databaseLabel: 'erased-floor' })

type Owner = { accountId: string; company: Awaited<ReturnType<typeof newCompanyData>> }

const floorWith = (db: Db, directory: string, store: ArtifactStore): Floor => ({
  db,
  log: pino({ level: 'silent' }),
  printTimeoutMs: 10_000,
  floorCountry: 'ES',
  store,
  printer: new SpoolPrinter(join(directory, 'spool')),
})

const letterIn = (db: Db, { accountId, company }: Owner, status: LetterStatus) =>
  newLetter(db, accountId, company, { status, message: 'Gracias, Lucía', address: { ...normalizeAddress(sampleRecipient), verifiedBy: 'offline' } })

const rowOf = async (db: Db, id: string) => (await db.select().from(letters).where(eq(letters.id, id)))[0]!
const kept = (directory: string, id: string) =>
  access(join(directory, 'artifacts', letterFolder(id))).then(
    () => true,
    () => false,
  )
const spooled = async (directory: string, id: string) =>
  (await readdir(join(directory, 'spool')).catch(() => [] as string[])).filter((name) => name.startsWith(id))

describe('the floor and an erased letter', () => {
  it('a run overtaken while it draws (another run printed the letter, which was then erased) leaves none of its files behind', async ({
    database: db,
    directory,
    local,
    owner,
  }) => {
    const letter = await letterIn(db, owner, 'ready_for_print')
    let overtaken = false
    // Before this run's first file is kept: another run takes the letter over and prints it, the
    // letter is erased, and the eraser removes its files. This run then keeps what it drew.
    const store: ArtifactStore = {
      name: 'overtaken',
      get: (key) => local.get(key),
      list: (folder) => local.list(folder),
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
    expect(await produceLetter(floorWith(db, directory, store), letter.id)).toBe('superseded')
    expect(await kept(directory, letter.id)).toBe(false)
    expect(await spooled(directory, letter.id)).toEqual([])
    expect(await rowOf(db, letter.id)).toMatchObject({ status: 'printed', artifactsRemovedAt: expect.any(Date) })
  })

  it('never claims an erased failed letter again: nothing drawn, nothing printed', async ({ database: db, directory, local, owner }) => {
    const letter = await letterIn(db, owner, 'failed')
    await db.transaction((tx) => erasePersonalData(tx, eq(letters.id, letter.id), { limit: 1, lock: 'wait' }))
    const before = await rowOf(db, letter.id)
    expect(await produceLetter(floorWith(db, directory, local), letter.id)).toBe('already_done')
    expect(await rowOf(db, letter.id)).toEqual(before)
    expect(await kept(directory, letter.id)).toBe(false)
    expect(await spooled(directory, letter.id)).toEqual([])
  })
})
