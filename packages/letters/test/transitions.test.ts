import { readFile } from 'node:fs/promises'
import { describe, expect } from 'vitest'
import { eq, sql } from 'drizzle-orm'
import { newLetter, type newCompanyData } from '@letters/test/support/factories'
import { it as base } from '@letters/test/support/fixtures'
import { letterEvents, letters, type Db } from '@letters/db'
import {
  cancellableStatuses,
  canMove,
  IllegalLetterMove,
  inFlightStatuses,
  isSentBackByOps,
  letterStatuses,
  letterTransitions,
  moveLetter,
  moveLetters,
  resumableStatuses,
  statusesInto,
  type LetterStatus,
} from '../src/index.js'

const it = base.extend({ databaseLabel: 'letter-transitions' })

type Owner = { accountId: string; company: Awaited<ReturnType<typeof newCompanyData>> }

async function statusOf(db: Db, letterId: string): Promise<{ status: LetterStatus; events: number }> {
  const [row] = await db.select({ status: letters.status }).from(letters).where(eq(letters.id, letterId))
  const events = await db.select({ id: letterEvents.id }).from(letterEvents).where(eq(letterEvents.letterId, letterId))
  return { status: row!.status, events: events.length }
}

const letterIn = async (db: Db, { accountId, company }: Owner, status: LetterStatus) => (await newLetter(db, accountId, company, { status })).id

describe('the transition table', () => {
  it('has a row for every status, and names only statuses', () => {
    expect(Object.keys(letterTransitions).sort()).toEqual([...letterStatuses].sort())
    for (const next of Object.values(letterTransitions)) for (const status of next) expect(letterStatuses).toContain(status)
  })

  it('is what docs/architecture.md draws, a letter resumed in its own status aside', async () => {
    const doc = await readFile(new URL('../../../docs/architecture.md', import.meta.url), 'utf8')
    const diagram = doc.slice(doc.indexOf('stateDiagram-v2'), doc.indexOf('```', doc.indexOf('stateDiagram-v2')))
    const drawn = [...diagram.matchAll(/^\s*(\w+) --> (\w+)/gm)].map(([, from, to]) => `${from} → ${to}`).filter((move) => !move.includes('[*]'))
    const table = Object.entries(letterTransitions).flatMap(([from, next]) => next.filter((to) => to !== from).map((to) => `${from} → ${to}`))
    expect(drawn.sort()).toEqual(table.sort())
  })

  it('is what the partial indexes of letters still on their way and of letters to look at list', async ({ database: db }) => {
    const predicateOf = async (name: string) => {
      const [row] = await db.execute<{ def: string }>(sql`SELECT indexdef AS def FROM pg_indexes WHERE indexname = ${name}`)
      return [...row!.def.matchAll(/'([a-z_]+)'::text/g)].map(([, status]) => status).sort()
    }
    expect(await predicateOf('letters_in_flight_idx')).toEqual([...inFlightStatuses].sort())
    expect(await predicateOf('letters_needs_look_idx')).toEqual([...resumableStatuses, 'failed'].sort())
  })

  it('gives the sets the rest of the code reads off it', () => {
    expect([...cancellableStatuses].sort()).toEqual(['ready_for_print', 'received', 'scheduled'])
    // The contracts' list, which the dashboard reads, is the table's.
    expect([...cancellableStatuses].sort()).toEqual([...statusesInto('cancelled')].sort())
    expect([...resumableStatuses].sort()).toEqual(['printing', 'ready_for_print', 'received'])
    expect(letterStatuses.filter(isSentBackByOps)).toEqual(['failed'])
    expect([...statusesInto('printed')].sort()).toEqual(['failed', 'printing', 'ready_for_print'])
    // Final statuses lead nowhere; a mailed letter only to the news that it came back.
    for (const final of ['returned', 'cancelled', 'address_rejected'] as const) expect(letterStatuses.filter((to) => canMove(final, to))).toEqual([])
    expect(letterStatuses.filter((to) => canMove('mailed', to))).toEqual(['returned'])
    expect(inFlightStatuses).not.toContain('mailed')
  })
})

describe('moveLetter and moveLetters keep to the table', () => {
  it.for([
    ['printed', 'ready_for_print'],
    ['mailed', 'printed'],
    ['cancelled', 'received'],
    ['scheduled', 'printing'],
  ] as const)('refuse %s → %s, a move the table forbids, and leave the letter and its events as they were', async ([from, to], { database: db, owner }) => {
    const letterId = await letterIn(db, owner, from)
    const before = await statusOf(db, letterId)
    await expect(db.transaction((tx) => moveLetter(tx, letterId, { from, to, detail: null }))).rejects.toBeInstanceOf(IllegalLetterMove)
    await expect(db.transaction((tx) => moveLetters(tx, [letterId], { from, to, detail: null }))).rejects.toBeInstanceOf(IllegalLetterMove)
    expect(await statusOf(db, letterId)).toEqual(before)
  })

  it('moves from any status the table allows into the target when the step names none, and from no other', async ({ database: db, owner }) => {
    const [printing, failed, mailed] = await Promise.all((['printing', 'failed', 'mailed'] as const).map((status) => letterIn(db, owner, status)))
    for (const letterId of [printing!, failed!, mailed!]) await db.transaction((tx) => moveLetter(tx, letterId, { to: 'printed', detail: null }))
    expect((await statusOf(db, printing!)).status).toBe('printed')
    expect((await statusOf(db, failed!)).status).toBe('printed')
    expect((await statusOf(db, mailed!)).status).toBe('mailed')
  })

  it('moves only from the status a step names, when it names one the table allows', async ({ database: db, owner }) => {
    const failed = await letterIn(db, owner, 'failed')
    const { moved } = await db.transaction((tx) => moveLetter(tx, failed, { from: 'printing', to: 'printed', detail: null }))
    expect(moved).toBe(false)
    expect((await statusOf(db, failed)).status).toBe('failed')
  })
})

describe('the database', () => {
  it('refuses a status outside the list, in letters and in their events', async ({ database: db, owner }) => {
    const letterId = await letterIn(db, owner, 'received')
    await expect(db.execute(sql`UPDATE letters SET status = 'lost' WHERE id = ${letterId}`)).rejects.toMatchObject({
      cause: { code: '23514', constraint_name: 'letters_status_known' },
    })
    await expect(db.execute(sql`INSERT INTO letter_events (letter_id, status) VALUES (${letterId}, 'lost')`)).rejects.toMatchObject({
      cause: { code: '23514', constraint_name: 'letter_events_status_known' },
    })
    expect((await statusOf(db, letterId)).status).toBe('received')
  })
})
