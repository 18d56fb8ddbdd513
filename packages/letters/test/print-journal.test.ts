import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect } from 'vitest'
import { LocalArtifactStore, PrintJournal } from '@letters/artifacts'
import { databaseRestores, restoreWatermark } from '@letters/db'
import { it as base } from '@letters/test/support/fixtures'
import { JOURNAL_PRINTED_DETAIL, onPaperPerJournal, watchForRestore } from '../src/index.js'

/** A print journal in an artifact store of the test's own. */
// eslint-disable-next-line no-empty-pattern -- a fixture lists what it uses in an object pattern: here, nothing
const it = base.extend('journal', async ({}, { onCleanup }) => {
  const directory = await mkdtemp(join(tmpdir(), 'letters-journal-'))
  onCleanup(() => rm(directory, { recursive: true, force: true }))
  return new PrintJournal(new LocalArtifactStore(directory))
})

it.override({ databaseLabel: 'print-journal' })

const letterA = '0b7c2a8e-58a4-4a4e-9d1f-0a4a3d1e7c11'
const letterB = '6f0e9b1c-3d2a-4c55-8e71-2b9f4c6d8a22'
const batchId = '9a1d2c3b-4e5f-4a6b-8c7d-1e2f3a4b5c66'
const silent = { warn: () => {} }

describe('the print journal', () => {
  it('has a letter on paper once every file of one of its jobs is recorded, and not before', async ({ journal }) => {
    const files = [`${letterA}.card.pdf`, `${letterA}.envelope.pdf`]
    expect(await onPaperPerJournal(journal, letterA)).toBeUndefined()
    await journal.recordLetterFile({ letterId: letterA, file: files[0]!, files, claim: 2, printer: 'spool' }, Buffer.from('card'))
    expect(await journal.letter(letterA)).toEqual({ handed: new Set([files[0]]), complete: false })
    expect(await onPaperPerJournal(journal, letterA)).toBeUndefined()
    await journal.recordLetterFile({ letterId: letterA, file: files[1]!, files, claim: 2, printer: 'spool' }, Buffer.from('envelope'))
    expect(await onPaperPerJournal(journal, letterA)).toEqual({ detail: JOURNAL_PRINTED_DETAIL })
    const [record] = await journal.letterRecords(letterA)
    // The card's SHA-256, and the time the printer took it.
    expect(record).toMatchObject({ letterId: letterA, claim: 2, printer: 'spool', sha256: expect.stringMatching(/^[0-9a-f]{64}$/), at: expect.any(String) })
  })

  it('has a batch’s letters on paper once its three files are, each with its place in the batch', async ({ journal }) => {
    const files = ['cards', 'envelopes', 'manifest'].map((kind) => `batch-${batchId}.${kind}`)
    await journal.pointLettersToBatch(batchId, [letterA, letterB])
    for (const file of files.slice(0, 2))
      await journal.recordBatchFile({ batchId, file, files, letterIds: [letterA, letterB], printer: 'spool' }, Buffer.from(file))
    expect(await journal.batchesOf(letterB)).toEqual([batchId])
    expect(await onPaperPerJournal(journal, letterB)).toBeUndefined()
    await journal.recordBatchFile({ batchId, file: files[2]!, files, letterIds: [letterA, letterB], printer: 'spool' }, Buffer.from('csv'))
    expect(await onPaperPerJournal(journal, letterB)).toEqual({
      detail: expect.stringMatching(new RegExp(`lote ${batchId} \\(n\\.º 2 de 2\\), según el diario de impresión$`)),
    })
    // A letter's pointer alone is not its files: its own journal stays empty.
    expect((await journal.letter(letterB)).handed.size).toBe(0)
  })

  it('forgets a letter and a batch whose files were erased', async ({ journal }) => {
    const files = [`${letterA}.card.pdf`]
    await journal.recordLetterFile({ letterId: letterA, file: files[0]!, files, claim: 1, printer: 'spool' }, Buffer.from('x'))
    await journal.removeLetter(letterA)
    expect(await journal.letterRecords(letterA)).toEqual([])
    await journal.removeLetter(letterA)
  })
})

describe('watchForRestore', () => {
  it('records a restore only when the database is behind the store’s watermark', async ({ database: db, journal }) => {
    await watchForRestore(db, journal, silent)
    await watchForRestore(db, journal, silent)
    expect(await db.select().from(databaseRestores)).toEqual([])
    const [row] = await db.select().from(restoreWatermark)
    expect(await journal.watermark()).toBe(row!.counter)

    // The database goes back two rounds, as a restore from a backup taken then would.
    await db.update(restoreWatermark).set({ counter: row!.counter - 2 })
    await watchForRestore(db, journal, silent)
    const restores = await db.select().from(databaseRestores)
    expect(restores).toMatchObject([{ source: 'watermark', databaseCounter: row!.counter - 2, journalCounter: row!.counter, reconciledAt: null }])
    // Caught up: the next rounds find nothing more.
    await watchForRestore(db, journal, silent)
    expect(await db.select().from(databaseRestores)).toHaveLength(1)
    expect(await journal.watermark()).toBe(row!.counter + 2)
  })

  it('any number of rounds at once never find a restore that did not happen', async ({ database: db, journal }) => {
    await db.delete(databaseRestores)
    await watchForRestore(db, journal, silent)
    await Promise.all(Array.from({ length: 12 }, () => watchForRestore(db, journal, silent)))
    await Promise.all(Array.from({ length: 12 }, () => watchForRestore(db, journal, silent)))
    expect(await db.select().from(databaseRestores)).toEqual([])
  })
})
