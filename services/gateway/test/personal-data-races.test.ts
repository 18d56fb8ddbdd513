import { access } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect } from 'vitest'
import { eq, inArray, sql } from 'drizzle-orm'
import postgres from 'postgres'
import { LocalArtifactStore, batchFileKey, batchFolder, type ArtifactStore } from '@letters/artifacts'
import { closeDb, createDb, letters, printBatches, printBatchLetters } from '@letters/db'
import { silentLog } from '@letters/test/support/pipeline'
import type { App } from '../src/app.js'
import { it as base } from '@letters/test/support/fixtures'
import { PersonalDataEraser } from '../src/features/personal-data/personal-data.js'
import { adminClient, publicClient, sendSingle } from './helpers.js'
import { databaseDump, found } from '@letters/test/support/personal-data-traces'
import { sweepBatchesWithArtifacts } from '@letters/letters'

/**
 * Erasure against what runs beside it: connections cut mid-transaction, an artifact store that
 * fails, batches, and the pipeline changing a letter's status at the same instant. A database of
 * its own: the eraser erases every due letter it finds.
 */
const it = base
  /**
   * Makes a letter of the test's account addressed to `name` (a word found nowhere else), printed
   * an hour ago, with a print file in the artifact store. The account has a webhook endpoint, so
   * its letters' events are copied for it too.
   */
  .extend('printedLetter', async ({ gateway: app, account }) => {
    const endpoint = await publicClient(app, account.apiKey).post('/webhooks', { url: 'https://93.184.216.34/hooks/letters' })
    expect(endpoint.statusCode, endpoint.body).toBe(201)
    return async (name: string, store: ArtifactStore = app.artifacts) => {
      const id = await sendSingle(app, account, { name, message: `Mensaje privado para ${name}` })
      await app.db.execute(sql`UPDATE letters SET status = 'printed', updated_at = now() - interval '1 hour' WHERE id = ${id}::uuid`)
      await store.put(`${id}/card.pdf`, Buffer.from(`%PDF tarjeta de ${name}`))
      return id
    }
  })
it.override({ gatewayOptions: { isolate: 'erasureraces' }, accountCredits: 10_000 })

const names = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(2, '0')}q`)

const inStore = (app: App, key: string) =>
  access(join(app.config.artifactsDir, key)).then(
    () => true,
    () => false,
  )

/** Everything stored of the letter that may carry its recipient: its row, its events' details and every stored event body. */
async function storedOf(app: App, id: string) {
  const [row] = await app.db
    .select({ erasedAt: letters.personalDataErasedAt, recipient: letters.recipient, message: letters.message })
    .from(letters)
    .where(eq(letters.id, id))
  const copies = await app.db.execute<{ text: string | null }>(sql`
    SELECT detail AS text FROM letter_events WHERE letter_id = ${id}::uuid
    UNION ALL SELECT body FROM events WHERE letter_id = ${id}::uuid
    UNION ALL SELECT body FROM webhook_events WHERE ((body::json -> 'data') ->> 'id') = ${id}`)
  return { ...row!, copies: copies.map((copy) => copy.text ?? '') }
}

/** The pool answers again once its connections were cut: the first queries after may fail. */
const reconnected = (db: App['db']) =>
  expect
    .poll(
      () =>
        db.execute(sql`SELECT 1`).then(
          () => true,
          () => false,
        ),
      { timeout: 10_000 },
    )
    .toBe(true)

const eraserOf = (db: App['db'], store: ArtifactStore, batchSize = 100) =>
  new PersonalDataEraser({ db, artifacts: store, log: silentLog }, { retentionMs: 60_000, batchSize })

/** Rounds until one finds nothing more to do. */
async function eraseAll(eraser: PersonalDataEraser) {
  for (let round = 0; round < 100 && (await eraser.tick()); round++);
}

describe('erasure while every connection is cut', () => {
  it('leaves each letter as it was or erased everywhere, never between, and a later round finishes the work, files included', async ({
    gateway: app,
    printedLetter,
  }) => {
    const people = names('Borrable', 60)
    const ids = await Promise.all(people.map((name) => printedLetter(name)))
    const db = createDb(app.config.databaseUrl, { max: 2 })
    const killer = postgres(app.config.databaseUrl, { max: 1, onnotice: () => {} })
    // Two letters a transaction: a round cut anywhere (mid-erasure, at commit, between the erasure and the files) loses at most that.
    const eraser = eraserOf(db, app.artifacts, 2)
    let cuts = 0
    let rounds = 0
    let failedRounds = 0
    try {
      const cutAll = async () => {
        await killer`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`
        cuts++
      }
      // Until ten rounds were cut and some letters are erased and the others not (counted on the
      // killer's own connection, which is never cut): a cut round may have committed its erasure
      // before the cut, so a count of whole rounds could leave every letter erased.
      const erasedSoFar = async () =>
        (await killer<Array<{ n: number }>>`SELECT count(*)::int AS n FROM letters WHERE id = ANY(${ids}::uuid[]) AND personal_data_erased_at IS NOT NULL`)[0]!
          .n
      // One cut a round, at a random moment within one and a half times an uncut round's length,
      // so that cuts land anywhere in a round (or after it) however fast this machine is today.
      let roundMs = 100
      const deadline = Date.now() + 40_000
      for (let done = 0; (failedRounds < 10 || done === 0) && done < ids.length - 4 && Date.now() < deadline; done = await erasedSoFar()) {
        const started = Date.now()
        const cut = new Promise((resolve) => setTimeout(resolve, Math.random() * roundMs * 1.5)).then(cutAll)
        await eraser.tick().then(
          () => {
            rounds++
            roundMs = Math.max(Date.now() - started, 10)
          },
          () => {
            failedRounds++
            roundMs *= 1.5
          },
        )
        await cut
      }
      await reconnected(app.db)

      let erased = 0
      for (const [index, id] of ids.entries()) {
        const name = people[index]!
        const stored = await storedOf(app, id)
        expect(stored.copies.length).toBeGreaterThan(1)
        if (stored.erasedAt === null) {
          expect(stored.recipient.name).toBe(name)
          expect(stored.message).toContain(name)
          // Its row, its first event's body in `events` and the endpoint's copy: all as they were.
          expect(stored.copies.filter((copy) => copy.includes(name)).length).toBe(stored.copies.filter((copy) => copy !== '').length)
        } else {
          erased++
          expect({ name: stored.recipient.name, message: stored.message }).toEqual({ name: '', message: '' })
          expect(found(stored.copies.join('\n'), [name])).toEqual([])
        }
      }
      console.log(`### ${cuts} cuts, ${rounds} rounds, ${failedRounds} cut: ${erased} of ${ids.length} letters erased, the others untouched`)
      expect(failedRounds).toBeGreaterThan(0)
      expect(erased).toBeGreaterThan(0)
      expect(erased).toBeLessThan(ids.length)

      await reconnected(db)
      await eraseAll(eraser)
      for (const id of ids) expect((await storedOf(app, id)).erasedAt).not.toBeNull()
      expect(found(await databaseDump(app.config.databaseUrl), people)).toEqual([])
      for (const id of ids) expect(await inStore(app, `${id}/card.pdf`)).toBe(false)
      const pending = await app.db
        .select({ id: letters.id })
        .from(letters)
        .where(sql`${inArray(letters.id, ids)} AND artifacts_removed_at IS NULL`)
      expect(pending).toEqual([])
    } finally {
      await killer.end()
      await closeDb(db)
    }
  }, 90_000)
})

describe('files', () => {
  it('are removed only after the erasure committed, and a removal that failed is done by a later round', async ({ gateway: app, printedLetter }) => {
    let failing = true
    const local = new LocalArtifactStore(app.config.artifactsDir)
    const flaky: ArtifactStore = {
      name: 'flaky',
      put: (key, data) => local.put(key, data),
      get: (key) => local.get(key),
      list: (folder) => local.list(folder),
      removeFolder: (folder) => (failing ? Promise.reject(new Error('the object store is down')) : local.removeFolder(folder)),
    }
    const [first, second] = names('Ficheruda', 2)
    const ids = [await printedLetter(first!), await printedLetter(second!)]
    const eraser = eraserOf(app.db, flaky)

    await expect(eraser.tick()).rejects.toThrow('the object store is down')
    for (const id of ids) {
      expect((await storedOf(app, id)).erasedAt).not.toBeNull()
      expect(await inStore(app, `${id}/card.pdf`)).toBe(true)
    }
    failing = false
    await eraseAll(eraser)
    for (const id of ids) expect(await inStore(app, `${id}/card.pdf`)).toBe(false)
  })

  it('of a batch go once every letter in it is erased, and a failed letter of a batch not handed over is not erased until it is', async ({
    gateway: app,
    account,
    printedLetter,
  }) => {
    const [a, b, c] = names('Lotera', 3)
    const handed = [await printedLetter(a!), await printedLetter(b!)]
    const [batch] = await app.db.insert(printBatches).values({ status: 'handed', letterCount: 2 }).returning({ id: printBatches.id })
    await app.db.insert(printBatchLetters).values(handed.map((letterId, index) => ({ batchId: batch!.id, letterId, sequence: index + 1 })))
    const manifest = batchFileKey(batch!.id, `batch-${batch!.id}.manifest.csv`)
    await app.artifacts.put(manifest, Buffer.from(`1;${a};${b}`))

    expect((await publicClient(app, account.apiKey).delete(`/cards/${handed[0]}/personal-data`)).statusCode).toBe(204)
    expect(await inStore(app, manifest)).toBe(true)
    expect((await publicClient(app, account.apiKey).delete(`/cards/${handed[1]}/personal-data`)).statusCode).toBe(204)
    expect(await inStore(app, batchFolder(batch!.id))).toBe(false)
    // With its files gone and every letter erased, its rows go too: nothing reads them again.
    expect(await app.db.select().from(printBatches).where(eq(printBatches.id, batch!.id))).toEqual([])
    expect(await app.db.select().from(printBatchLetters).where(eq(printBatchLetters.batchId, batch!.id))).toEqual([])

    // Given up on while it waited in a tray that is still closing: its batch will draw it from its row.
    const waiting = await printedLetter(c!)
    await app.db.update(letters).set({ status: 'failed' }).where(eq(letters.id, waiting))
    const [closing] = await app.db.insert(printBatches).values({ status: 'closing', letterCount: 1 }).returning({ id: printBatches.id })
    await app.db.insert(printBatchLetters).values({ batchId: closing!.id, letterId: waiting, sequence: 1 })
    const eraser = eraserOf(app.db, app.artifacts)
    await eraseAll(eraser)
    expect((await storedOf(app, waiting)).erasedAt).toBeNull()
    await app.db.update(printBatches).set({ status: 'handed' }).where(eq(printBatches.id, closing!.id))
    await eraseAll(eraser)
    expect((await storedOf(app, waiting)).erasedAt).not.toBeNull()
  })
})

/** A batch handed over with these letters, and its manifest (their names and addresses) in the artifact store. */
async function handedBatch(app: App, letterIds: string[]) {
  const [batch] = await app.db.insert(printBatches).values({ status: 'handed', letterCount: letterIds.length }).returning({ id: printBatches.id })
  await app.db.insert(printBatchLetters).values(letterIds.map((letterId, index) => ({ batchId: batch!.id, letterId, sequence: index + 1 })))
  await app.artifacts.put(batchFileKey(batch!.id, `batch-${batch!.id}.manifest.csv`), Buffer.from(letterIds.join(';')))
  return batch!.id
}

describe('the files of a batch whose removal failed', () => {
  it('go at a later round, which looks at a bounded stretch of the batches with files each time and comes round to every one', async ({
    gateway: app,
    printedLetter,
  }) => {
    let failing = true
    const local = new LocalArtifactStore(app.config.artifactsDir)
    const flaky: ArtifactStore = {
      name: 'flaky',
      put: (key, data) => local.put(key, data),
      get: (key) => local.get(key),
      list: (folder) => local.list(folder),
      removeFolder: (folder) => (failing ? Promise.reject(new Error('the object store is down')) : local.removeFolder(folder)),
    }
    // Handed batches whose letters were printed a moment ago (not due yet): their files stay.
    const kept: string[] = []
    for (const name of names('Guardada', 5)) {
      const id = await printedLetter(name)
      await app.db.execute(sql`UPDATE letters SET updated_at = now() WHERE id = ${id}::uuid`)
      kept.push(await handedBatch(app, [id]))
    }
    const [lost] = names('Perdida', 1)
    const lostBatch = await handedBatch(app, [await printedLetter(lost!)])
    await expect(eraserOf(app.db, flaky).tick()).rejects.toThrow('the object store is down')
    expect(await inStore(app, batchFolder(lostBatch))).toBe(true)
    failing = false

    // Each look takes `limit` of the batches with files, in id order, and says where the next starts.
    const looked: string[] = []
    let after: string | null = null
    for (let call = 0; call < 100; call++) {
      const sweep: Awaited<ReturnType<typeof sweepBatchesWithArtifacts>> = await sweepBatchesWithArtifacts(app.db, { after, limit: 2 })
      looked.push(...sweep.erased)
      if (sweep.next === null) break
      expect(after === null || sweep.next > after).toBe(true)
      after = sweep.next
    }
    expect(looked).toEqual([lostBatch])

    // An eraser that did not see the failure (another gateway, or this one restarted) finds it within a turn of its looks.
    const withFiles = await app.db
      .select({ id: printBatches.id })
      .from(printBatches)
      .where(sql`status = 'handed' AND artifacts_removed_at IS NULL`)
    const eraser = eraserOf(app.db, app.artifacts, 2)
    for (let round = 0; round < Math.ceil(withFiles.length / 2) && (await inStore(app, batchFolder(lostBatch))); round++) await eraser.tick()
    expect(await inStore(app, batchFolder(lostBatch))).toBe(false)
    expect(await app.db.select().from(printBatches).where(eq(printBatches.id, lostBatch))).toEqual([])
    for (const batch of kept) expect(await inStore(app, batchFolder(batch))).toBe(true)
  })
})

describe('erasure racing a change of status', () => {
  it('never lets the change bring the data back: each letter ends mailed and erased, its every event without its recipient', async ({
    gateway: app,
    account,
    printedLetter,
  }) => {
    const people = names('Carrera', 8)
    const ids = await Promise.all(people.map((name) => printedLetter(name)))
    const answers = await Promise.all(
      ids.flatMap((id) => [adminClient(app).post(`/admin/cards/${id}/mailed`), publicClient(app, account.apiKey).delete(`/cards/${id}/personal-data`)]),
    )
    expect(answers.map((answer) => answer.statusCode)).toEqual(ids.flatMap(() => [200, 204]))
    for (const [index, id] of ids.entries()) {
      const stored = await storedOf(app, id)
      expect(stored.erasedAt).not.toBeNull()
      expect(found(stored.copies.join('\n'), [people[index]!])).toEqual([])
      const [mailed] = await app.db.execute<{ n: number }>(
        sql`SELECT count(*)::int AS n FROM webhook_events WHERE type = 'letter.mailed' AND ((body::json -> 'data') ->> 'id') = ${id}`,
      )
      expect(mailed?.n).toBe(1)
    }
    expect(found(await databaseDump(app.config.databaseUrl), people)).toEqual([])
  })
})
