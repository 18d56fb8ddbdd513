import { describe, expect } from 'vitest'
import { asc, eq, inArray } from 'drizzle-orm'
import { newLetter, type newCompanyData } from '@letters/test/support/factories'
import { it as base } from '@letters/test/support/fixtures'
import { events, letterEvents, webhookEndpoints, webhookEvents, type Db, type LetterStatus } from '@letters/db'
import { moveLetter, moveLetters, recordLetterEvents } from '../src/index.js'

const it = base.extend({ databaseLabel: 'letter-events' })

type Owner = { accountId: string; company: Awaited<ReturnType<typeof newCompanyData>> }

/** A letter as the intake leaves it: `received`, with its first letter_events row and its event. */
async function receivedLetter(db: Db, { accountId, company }: Owner, livemode = true) {
  const letter = await newLetter(db, accountId, company, { livemode })
  await db.transaction(async (tx) => {
    await tx.insert(letterEvents).values({ letterId: letter.id, status: 'received' })
    await recordLetterEvents(tx, [letter.id])
  })
  return letter.id
}

const move = (db: Db, letterId: string, from: LetterStatus, to: LetterStatus, detail: string | null = null) =>
  db.transaction((tx) => moveLetter(tx, letterId, { from, to, detail }))

const eventsOf = (db: Db, letterId: string) => db.select().from(events).where(eq(events.letterId, letterId)).orderBy(asc(events.sequence))

describe("a letter's events", () => {
  it('are numbered 1, 2, 3… in the order of its statuses; a status resumed or repeated (a failed print attempt) is no event', async ({
    database: db,
    owner,
  }) => {
    const letterId = await receivedLetter(db, owner)
    await move(db, letterId, 'received', 'ready_for_print')
    // The reconciler resuming the letter where it was.
    await move(db, letterId, 'ready_for_print', 'ready_for_print', 'Reanudada tras una incidencia interna')
    await move(db, letterId, 'ready_for_print', 'printing')
    // The floor recording an attempt that failed.
    await db.insert(letterEvents).values({ letterId, status: 'printing', detail: 'Intento 1 de 4 fallido; se reintentará' })
    await move(db, letterId, 'printing', 'printed')
    await db.transaction((tx) => moveLetters(tx, [letterId], { to: 'mailed', detail: null }))

    const written = await eventsOf(db, letterId)
    expect(written.map((event) => [event.sequence, event.type])).toEqual([
      [1, 'letter.received'],
      [2, 'letter.ready_for_print'],
      [3, 'letter.printing'],
      [4, 'letter.printed'],
      [5, 'letter.mailed'],
    ])
    // Each body carries its own id, sequence and the instant of its change (the letter_events row's).
    const changes = await db.select().from(letterEvents).where(eq(letterEvents.letterId, letterId)).orderBy(asc(letterEvents.id))
    for (const event of written) {
      const body = JSON.parse(event.body) as { id: string; type: string; sequence: number; occurredAt: string; data: { status: string } }
      expect(body).toMatchObject({ id: event.id, type: event.type, sequence: event.sequence, data: { status: event.type.slice('letter.'.length) } })
      const change = changes.find((row) => `letter.${row.status}` === event.type)!
      expect(body.occurredAt).toBe(change.at.toISOString())
      expect(event.occurredAt.toISOString()).toBe(change.at.toISOString())
    }
  })

  it('are numbered per letter when many move at once', async ({ database: db, owner }) => {
    const fresh = await receivedLetter(db, owner)
    const further = await receivedLetter(db, owner)
    await move(db, further, 'received', 'ready_for_print')
    await db.transaction((tx) => moveLetters(tx, [fresh, further], { to: 'cancelled', detail: null }))
    expect((await eventsOf(db, fresh)).map((event) => [event.sequence, event.type])).toEqual([
      [1, 'letter.received'],
      [2, 'letter.cancelled'],
    ])
    expect((await eventsOf(db, further)).map((event) => [event.sequence, event.type])).toEqual([
      [1, 'letter.received'],
      [2, 'letter.ready_for_print'],
      [3, 'letter.cancelled'],
    ])
  })

  it("are written once, and copied with the same body for each endpoint of the letter's account and mode subscribed to the type", async ({
    database: db,
    owner,
  }) => {
    const { accountId } = owner
    const endpoint = (livemode: boolean, eventTypes: string[]) =>
      db
        .insert(webhookEndpoints)
        .values({ accountId, url: 'https://93.184.216.34/hooks', events: eventTypes, secret: 'whsec_x', livemode })
        .returning()
        .then(([row]) => row!.id)
    const everything = await endpoint(true, ['letter.received', 'letter.ready_for_print', 'letter.printing', 'letter.printed'])
    const printedOnly = await endpoint(true, ['letter.printed'])
    const testMode = await endpoint(false, ['letter.received', 'letter.printed'])
    try {
      const letterId = await receivedLetter(db, owner)
      await move(db, letterId, 'received', 'ready_for_print')
      await move(db, letterId, 'ready_for_print', 'printing')
      await move(db, letterId, 'printing', 'printed')
      const written = await eventsOf(db, letterId)
      expect(written).toHaveLength(4)
      const copies = await db
        .select()
        .from(webhookEvents)
        .where(inArray(webhookEvents.endpointId, [everything, printedOnly, testMode]))
      const copiesOf = (endpointId: string) =>
        copies
          .filter((copy) => copy.endpointId === endpointId)
          .map((copy) => [copy.type, written.find((event) => event.type === copy.type)!.body === copy.body])
          .sort()
      expect(copiesOf(everything)).toEqual([
        ['letter.printed', true],
        ['letter.printing', true],
        ['letter.ready_for_print', true],
        ['letter.received', true],
      ])
      expect(copiesOf(printedOnly)).toEqual([['letter.printed', true]])
      expect(copiesOf(testMode)).toEqual([])
    } finally {
      await db.delete(webhookEndpoints).where(eq(webhookEndpoints.accountId, accountId))
    }
  })
})
