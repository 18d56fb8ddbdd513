import { and, asc, count, eq, inArray, sql } from 'drizzle-orm'
import { alias } from 'drizzle-orm/pg-core'
import { batchFileKey, batchFileKinds, batchFileMediaTypes, batchFileNames, type ArtifactStore, type BatchFileKind } from '@letters/artifacts'
import { DESIGN_STOCK, UUID_PATTERN, type InkColor, type LetterStatus } from '@letters/contracts'
import {
  cardDesigns,
  envelopeDesigns,
  letters,
  literalSql,
  notHandedBatchStatuses,
  printBatches,
  printBatchStatus,
  type Executor,
  type PrintBatchStatus,
} from '@letters/db'
import { notFound } from '../../common/errors.js'
import { needsLookCountSql, needsLookFirstSql } from '../ops/index.js'
import { inFlightStatuses, statusListSql } from '@letters/letters'

/** How many of the last batches the page lists, and how many letters that need a look. */
export const RECENT_BATCHES = 20
export const NEEDS_LOOK_SHOWN = 50

export interface FloorBatch {
  id: string
  status: PrintBatchStatus
  letterCount: number
  openedAt: Date
  closedAt: Date | null
  handedAt: Date | null
  /** Since it opened, by the database's clock (the one BATCH_MAX_WAIT_MS is measured by). */
  ageMs: number
  /** The card stock and envelope stock to load for it, as people read them; null for letters printed before designs had stock. */
  cardStock: string | null
  envelopeStock: string | null
  /** The ink of its letters: the pen a plotter needs. */
  inkColor: InkColor
}

export type LetterToLookAt = {
  id: string
  code: string
  status: LetterStatus
  name: string
  city: string
  stuckForSeconds: number
}

/** What the floor's page shows: live letters only (test letters never reach the floor). */
export interface FloorOverview {
  /** Batches still taking letters (`open`) or being handed to the printer (`closing`). */
  current: FloorBatch[]
  /** The last batches closed, newest first. */
  recent: FloorBatch[]
  /** Live letters still on their way (inFlightStatuses), by status: mailed, cancelled and rejected ones are history. */
  counts: Array<{ status: LetterStatus; count: number }>
  /** Failed or stuck (stuck-letters.ts), the longest first, at most NEEDS_LOOK_SHOWN… */
  needsLook: LetterToLookAt[]
  /** …of this many. */
  needsLookTotal: number
}

const b = alias(printBatches, 'b')
const batchFields = {
  id: b.id,
  status: b.status,
  letterCount: b.letterCount,
  openedAt: b.openedAt,
  closedAt: b.closedAt,
  handedAt: b.handedAt,
  ageMs: sql<number>`(EXTRACT(EPOCH FROM now() - ${b.openedAt}) * 1000)::bigint`.mapWith(Number),
  cardStock: b.cardStock,
  envelopeStock: b.envelopeStock,
  inkColor: b.inkColor,
}

/**
 * The batches' stocks as the floor reads them: a stock code as it is; a design's own printed
 * stock (DESIGN_STOCK) as the design's name and artwork version; none (letters printed before
 * designs had stock) as null.
 */
async function withStockLabels<B extends { cardStock: string | null; envelopeStock: string | null }>(ex: Executor, batches: B[]): Promise<B[]> {
  const ids = new Set(batches.flatMap((batch) => [batch.cardStock, batch.envelopeStock].flatMap((stock) => DESIGN_STOCK.exec(stock ?? '')?.[1] ?? [])))
  const names = new Map<string, string>()
  if (ids.size > 0) {
    for (const table of [cardDesigns, envelopeDesigns]) {
      for (const row of await ex
        .select({ id: table.id, name: table.name })
        .from(table)
        .where(inArray(table.id, [...ids])))
        names.set(row.id, row.name)
    }
  }
  const label = (stock: string | null) =>
    stock ? stock.replace(DESIGN_STOCK, (_match, id: string, version: string) => `${names.get(id) ?? 'diseño'} (arte v${version})`) : null
  return batches.map((batch) => ({ ...batch, cardStock: label(batch.cardStock), envelopeStock: label(batch.envelopeStock) }))
}

const l = alias(letters, 'l')

export async function floorOverview(ex: Executor, reconcileAfterMs: number): Promise<FloorOverview> {
  const [current, recent, counts, needsLook, [needsLookTotal]] = await Promise.all([
    ex.select(batchFields).from(b).where(inArray(b.status, notHandedBatchStatuses)).orderBy(asc(b.openedAt)),
    ex
      .select(batchFields)
      .from(b)
      // Written as print_batches_recent_idx's predicate is, a literal, so that the index matches it.
      .where(sql`${b.status} <> ${literalSql(printBatchStatus.open)}`)
      .orderBy(sql`${b.closedAt} DESC NULLS LAST`, asc(b.id))
      .limit(RECENT_BATCHES),
    // Letters on their way only (letters_in_flight_idx): the count does not grow with every letter ever mailed.
    ex
      .select({ status: letters.status, count: count() })
      .from(letters)
      .where(and(eq(letters.livemode, true), sql`${letters.status} IN ${statusListSql(inFlightStatuses)}`))
      .groupBy(letters.status)
      .orderBy(asc(letters.status)),
    ex
      .select({
        id: l.id,
        code: l.code,
        status: l.status,
        name: sql<string>`concat_ws(' ', l.recipient ->> 'name', l.recipient ->> 'surname')`,
        city: sql<string>`coalesce(l.address ->> 'city', l.recipient ->> 'city', '')`,
        stuckForSeconds: sql<number>`floor(EXTRACT(EPOCH FROM now() - l.updated_at))::int`,
      })
      .from(l)
      .where(sql`${l.id} IN (${needsLookFirstSql(reconcileAfterMs, { limit: NEEDS_LOOK_SHOWN, livemode: true })})`)
      .orderBy(asc(l.updatedAt), asc(l.id))
      .limit(NEEDS_LOOK_SHOWN),
    ex.execute<{ count: number }>(sql`SELECT ${needsLookCountSql(reconcileAfterMs, { livemode: true })} AS count`),
  ])
  return {
    current: await withStockLabels(ex, current),
    recent: await withStockLabels(ex, recent),
    counts,
    needsLook,
    needsLookTotal: Number(needsLookTotal?.count ?? 0),
  }
}

const isBatchFileKind = (kind: string): kind is BatchFileKind => (batchFileKinds as readonly string[]).includes(kind)

/**
 * One of the three files of a batch handed to the printer, as the artifact store keeps it. A
 * batch still open or being handed over has no final files yet: 404, as an unknown one.
 */
export async function batchFile(ex: Executor, store: ArtifactStore, batchId: string, kind: string) {
  if (!isBatchFileKind(kind)) throw notFound(`El lote no tiene un archivo '${kind}': los archivos son ${batchFileKinds.join(', ')}`)
  if (!UUID_PATTERN.test(batchId)) throw notFound('El lote no existe')
  // Ids are written in lower case, in the database and in the files' names alike.
  batchId = batchId.toLowerCase()
  const [batch] = await ex.select({ status: printBatches.status }).from(printBatches).where(eq(printBatches.id, batchId))
  if (!batch) throw notFound('El lote no existe')
  if (batch.status !== printBatchStatus.handed) throw notFound('El lote aún no se ha entregado a la impresora: sus archivos no están listos')
  const name = batchFileNames(batchId)[kind]
  const data = await store.get(batchFileKey(batchId, name))
  if (!data) throw notFound(`El archivo ${name} no está en el almacén de archivos`)
  return { name, data, mediaType: batchFileMediaTypes[kind] }
}
