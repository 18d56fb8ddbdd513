import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { expect, vi } from 'vitest'
import { parse } from 'csv-parse/sync'
import { and, asc, eq, inArray, sql } from 'drizzle-orm'
import { letterEvents, letters, printBatchHandoffs, printBatches, printBatchLetters, type Db } from '@letters/db'
import { compact, pdfText, pdfTextBoxes } from './pdf.js'

/** Destinations for a batch test: Spanish postal codes of several provinces, and a few countries abroad. */
const places = [
  { zip: '28013', city: 'Madrid', country: 'ES' },
  { zip: '41004', city: 'Sevilla', country: 'ES' },
  { zip: '08001', city: 'Barcelona', country: 'ES' },
  { zip: '46001', city: 'Valencia', country: 'ES' },
  { zip: '48001', city: 'Bilbao', country: 'ES' },
  { zip: '28001', city: 'Madrid', country: 'ES' },
  { zip: '41001', city: 'Sevilla', country: 'ES' },
  { zip: '75001', city: 'Paris', country: 'FR' },
  { zip: '10115', city: 'Berlin', country: 'DE' },
]

/** The n-th letter of a batch test: a message and a street of its own, a destination from `places` (one in eight abroad at most). */
export function batchLetter(n: number) {
  const place = places[(n * 7) % places.length]!
  return {
    message: `Gracias por tu pedido, cliente ${n}.`,
    name: 'Cliente',
    surname: `Número ${n}`,
    address: `Calle Mayor ${((n * 37) % 90) + 1}`,
    zip: place.zip,
    city: place.city,
    province: '',
    country: place.country,
  }
}

type ManifestRow = { sequence: string; letterId: string; code: string; name: string; zip: string; city: string; province: string; country: string }

/**
 * Checks every handed batch against its printed files (in `printedDir(batchId)`: the spool, or
 * the artifact store a PRINT_COMMAND printed from) and the database: each batch's three files are there, the manifest (UTF-8 with BOM) lists its letters from 1 in presorted order (country,
 * postal code, street), the envelopes PDF has one page per letter in that order with its code and
 * postal code, the cards PDF four cards a sheet in that order, every letter is in exactly one batch,
 * printed, with the event naming its batch and sequence. Returns the batches' sizes, largest first.
 */
export async function expectBatchesAgree(db: Db, printedDir: (batchId: string) => string, letterIds: string[]): Promise<number[]> {
  const batches = await db.select().from(printBatches).orderBy(asc(printBatches.openedAt))
  for (const batch of batches) expect(batch.status).toBe('handed')
  const seen = new Map<string, string>()
  for (const batch of batches) {
    const csv = await readFile(join(printedDir(batch.id), `batch-${batch.id}.manifest.csv`))
    expect([...csv.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf])
    const rows = parse<ManifestRow>(csv, { bom: true, columns: true })
    expect(rows.length).toBe(batch.letterCount)
    expect(rows.map((row) => Number(row.sequence))).toEqual(rows.map((_, index) => index + 1))
    const members = await db
      .select({ id: letters.id, code: letters.code, address: letters.address, sequence: printBatchLetters.sequence, status: letters.status })
      .from(printBatchLetters)
      .innerJoin(letters, eq(letters.id, printBatchLetters.letterId))
      .where(eq(printBatchLetters.batchId, batch.id))
    const byId = new Map(members.map((member) => [member.id, member]))
    rows.forEach((row, index) => {
      const member = byId.get(row.letterId)!
      expect(member, row.letterId).toBeDefined()
      expect(member.sequence).toBe(index + 1)
      expect(member.code).toBe(row.code)
      expect(member.status).toBe('printed')
      const address = member.address as { zip: string; country: string; address: string }
      expect([row.zip, row.country]).toEqual([address.zip, address.country])
      expect(seen.has(row.letterId), `${row.letterId} in two batches`).toBe(false)
      seen.set(row.letterId, batch.id)
    })
    // Presorted: country, then postal code, then street (numbers by value).
    for (let i = 1; i < rows.length; i++) {
      const [a, b] = [
        byId.get(rows[i - 1]!.letterId)!.address as { country: string; zip: string; address: string },
        byId.get(rows[i]!.letterId)!.address as { country: string; zip: string; address: string },
      ]
      const order = a.country.localeCompare(b.country, 'en') || a.zip.localeCompare(b.zip, 'en') || a.address.localeCompare(b.address, 'es', { numeric: true })
      expect(order, `${JSON.stringify(a)} before ${JSON.stringify(b)}`).toBeLessThanOrEqual(0)
    }

    const envelopes = await pdfTextBoxes(await readFile(join(printedDir(batch.id), `batch-${batch.id}.envelopes.pdf`)))
    expect(envelopes.length).toBe(rows.length)
    envelopes.forEach((page, index) => {
      const text = compact(page.boxes.map((box) => box.text).join(''))
      expect(text).toContain(rows[index]!.code)
      expect(text).toContain(compact(rows[index]!.name))
      expect(text).toContain(rows[index]!.zip)
    })

    const cards = await pdfText(await readFile(join(printedDir(batch.id), `batch-${batch.id}.cards.pdf`)))
    expect(cards.pages).toBe(Math.ceil(rows.length / 4))
    // The cards in the manifest's order: each letter's message (its number) after the one before.
    let from = 0
    for (const row of rows) {
      const number = row.name.replace(/\D/g, '')
      const at = cards.text.indexOf(compact(`cliente ${number}.`), from)
      expect(at, `card of ${row.name} in order`).toBeGreaterThanOrEqual(from)
      from = at + 1
    }

    const events = await db
      .select({ letterId: letterEvents.letterId, detail: letterEvents.detail })
      .from(letterEvents)
      .where(
        inArray(
          letterEvents.letterId,
          rows.map((row) => row.letterId),
        ),
      )
    for (const row of rows) {
      const printed = events.filter((event) => event.letterId === row.letterId && event.detail?.includes(batch.id))
      expect(printed.map((event) => event.detail)).toEqual([`Entregada a la impresora en el lote ${batch.id} (n.º ${row.sequence} de ${rows.length})`])
    }
    const handoffs = await db.select({ file: printBatchHandoffs.file }).from(printBatchHandoffs).where(eq(printBatchHandoffs.batchId, batch.id))
    expect(handoffs.map((handoff) => handoff.file).sort()).toEqual([
      `batch-${batch.id}.cards.pdf`,
      `batch-${batch.id}.envelopes.pdf`,
      `batch-${batch.id}.manifest.csv`,
    ])
  }
  expect([...seen.keys()].sort()).toEqual([...letterIds].sort())
  return batches.map((batch) => batch.letterCount).sort((a, b) => b - a)
}

/**
 * Ends the lease a closer killed mid-batch still holds on its batch (PRINT_TIMEOUT_MS and 30 s
 * from its last renewal), as if that time had passed: a surviving closer then takes the batch
 * over at its next round, without the test waiting for it. Only once the dead worker's
 * connections (`applicationName`, its PGAPPNAME) are gone, so that no renewal it sent before it
 * died can land afterwards. Returns whether the lease still held the batch then, as it must: a
 * killed closer cannot let go of it. Each statement is tried again when it fails, for tests that
 * terminate every backend meanwhile.
 */
export async function lapseKilledCloserLease(db: Db, batchId: string, applicationName: string): Promise<boolean> {
  const again = { timeout: 60_000, interval: 50 }
  const backends = async () =>
    (await db.execute<{ n: number }>(sql`SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = ${applicationName}`))[0]!.n
  await expect.poll(backends, again).toBe(0)
  const held = await vi.waitFor(async () => {
    const [batch] = await db
      .select({ held: sql<boolean>`${printBatches.status} = 'closing' AND coalesce(${printBatches.closerLeaseUntil} > now(), false)` })
      .from(printBatches)
      .where(eq(printBatches.id, batchId))
    return batch?.held ?? false
  }, again)
  await vi.waitFor(async () => {
    await db
      .update(printBatches)
      .set({ closerLeaseUntil: sql`now() - interval '1 second'` })
      .where(and(eq(printBatches.id, batchId), eq(printBatches.status, 'closing')))
  }, again)
  return held
}
