import { sql } from 'drizzle-orm'
import { batchFileKey, batchFileKinds, batchFileMediaTypes, batchFileNames, type ArtifactStore, type BatchFileKind } from '@letters/artifacts'
import type { LetterStatus } from '@letters/contracts'
import { isoInstant, type Executor, type PrintBatchStatus } from '@letters/db'
import { notFound } from '../errors.js'
import { UUID } from './cursor.js'
import { needsLookSql } from './stuck-letters.js'

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
  counts: Array<{ status: LetterStatus; count: number }>
  /** Failed or stuck (needsLookSql), the longest first, at most NEEDS_LOOK_SHOWN… */
  needsLook: LetterToLookAt[]
  /** …of this many. */
  needsLookTotal: number
}

type BatchRow = Omit<FloorBatch, 'openedAt' | 'closedAt' | 'handedAt'> & { openedAt: string; closedAt: string | null; handedAt: string | null }

const batchColumns = sql.raw(`b.id, b.status, b.letter_count AS "letterCount", ${isoInstant('b.opened_at')} AS "openedAt",
  ${isoInstant('b.closed_at')} AS "closedAt", ${isoInstant('b.handed_at')} AS "handedAt", (EXTRACT(EPOCH FROM now() - b.opened_at) * 1000)::bigint AS "ageMs"`)

const asBatch = (row: BatchRow): FloorBatch => ({
  ...row,
  letterCount: Number(row.letterCount),
  ageMs: Number(row.ageMs),
  openedAt: new Date(row.openedAt),
  closedAt: row.closedAt === null ? null : new Date(row.closedAt),
  handedAt: row.handedAt === null ? null : new Date(row.handedAt),
})

export async function floorOverview(ex: Executor, reconcileAfterMs: number): Promise<FloorOverview> {
  const [current, recent, counts, needsLook, [needsLookTotal]] = await Promise.all([
    ex.execute<BatchRow>(sql`SELECT ${batchColumns} FROM print_batches b WHERE b.status IN ('open', 'closing') ORDER BY b.opened_at`),
    ex.execute<BatchRow>(
      sql`SELECT ${batchColumns} FROM print_batches b WHERE b.status <> 'open' ORDER BY b.closed_at DESC NULLS LAST, b.id LIMIT ${RECENT_BATCHES}`,
    ),
    ex.execute<{ status: LetterStatus; count: number }>(sql`SELECT status, count(*)::int AS count FROM letters WHERE livemode GROUP BY status ORDER BY status`),
    ex.execute<LetterToLookAt>(sql`
      SELECT l.id, l.code, l.status, concat_ws(' ', l.recipient ->> 'name', l.recipient ->> 'surname') AS name,
        coalesce(l.address ->> 'city', l.recipient ->> 'city', '') AS city,
        floor(EXTRACT(EPOCH FROM now() - l.updated_at))::int AS "stuckForSeconds"
      FROM letters l
      WHERE l.livemode AND ${needsLookSql('l', reconcileAfterMs)}
      ORDER BY l.updated_at, l.id
      LIMIT ${NEEDS_LOOK_SHOWN}`),
    ex.execute<{ count: number }>(sql`SELECT count(*)::int AS count FROM letters l WHERE l.livemode AND ${needsLookSql('l', reconcileAfterMs)}`),
  ])
  return {
    current: current.map(asBatch),
    recent: recent.map(asBatch),
    counts: [...counts],
    needsLook: [...needsLook],
    needsLookTotal: needsLookTotal?.count ?? 0,
  }
}

const isBatchFileKind = (kind: string): kind is BatchFileKind => (batchFileKinds as readonly string[]).includes(kind)

/**
 * One of the three files of a batch handed to the printer, as the artifact store keeps it. A
 * batch still open or being handed over has no final files yet: 404, as an unknown one.
 */
export async function batchFile(ex: Executor, store: ArtifactStore, batchId: string, kind: string) {
  if (!isBatchFileKind(kind)) throw notFound(`El lote no tiene un archivo '${kind}': los archivos son ${batchFileKinds.join(', ')}`)
  if (!UUID.test(batchId)) throw notFound('El lote no existe')
  // Ids are written in lower case, in the database and in the files' names alike.
  batchId = batchId.toLowerCase()
  const [batch] = await ex.execute<{ status: PrintBatchStatus }>(sql`SELECT status FROM print_batches WHERE id = ${batchId}::uuid`)
  if (!batch) throw notFound('El lote no existe')
  if (batch.status !== 'handed') throw notFound('El lote aún no se ha entregado a la impresora: sus archivos no están listos')
  const name = batchFileNames(batchId)[kind]
  const data = await store.get(batchFileKey(batchId, name))
  if (!data) throw notFound(`El archivo ${name} no está en el almacén de archivos`)
  return { name, data, mediaType: batchFileMediaTypes[kind] }
}
