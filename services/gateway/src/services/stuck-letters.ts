import { and, asc, sql, type SQL } from 'drizzle-orm'
import { alias } from 'drizzle-orm/pg-core'
import type { admin, LetterStatus } from '@letters/contracts'
import { letters, type Db, type Executor } from '@letters/db'
import { conflict } from '../errors.js'
import { assertCardId, cardNotFound, getAnyCard } from './cards.js'
import { decodeCursor, pageOf, positionSql, type Positioned } from './cursor.js'
import { isoInstant, isResumable, retryLetter, withoutProgressSql } from '@letters/letters'

type StuckLetter = admin.StuckLetterList['data'][number]

/**
 * The letters ops (and the floor) must look at: `failed` (production gave up; a retry sends it
 * back) or without progress past RECONCILE_AFTER_MS (the reconciler's notion, withoutProgressSql).
 */
export const needsLookSql = (alias: string, afterMs: number): SQL => sql`(${sql.identifier(alias)}.status = 'failed' OR ${withoutProgressSql(alias, afterMs)})`

/** The letters ops must look at (needsLookSql), the longest stuck first. Read by letters_status_updated_idx. */
export async function listStuckLetters(ex: Executor, afterMs: number, query: admin.StuckLetterListQuery): Promise<admin.StuckLetterList> {
  const limit = query.limit ?? 20
  const after = query.cursor ? decodeCursor(query.cursor) : undefined
  const l = alias(letters, 'l')
  const rows = await ex
    .select({
      id: l.id,
      position: sql<Positioned['position']>`${positionSql(l.updatedAt)}`,
      // Built by Postgres, instants already in the API's format.
      letter: sql<StuckLetter>`json_build_object('id', l.id, 'accountId', l.account_id, 'livemode', l.livemode, 'status', l.status,
        'createdAt', ${isoInstant(l.createdAt)}, 'updatedAt', ${isoInstant(l.updatedAt)},
        'stuckForSeconds', floor(EXTRACT(EPOCH FROM now() - l.updated_at))::int)`,
    })
    .from(l)
    .where(and(needsLookSql('l', afterMs), after ? sql`(${l.updatedAt}, ${l.id}) > (${after.position}::timestamptz, ${after.id}::uuid)` : undefined))
    .orderBy(asc(l.updatedAt), asc(l.id))
    .limit(limit + 1)
  const page = pageOf(rows, limit)
  return { data: page.rows.map((row) => row.letter), nextCursor: page.nextCursor }
}

/** Why a letter in each status that is neither failed nor stuck is not retried. */
const notRetryable: Record<Exclude<LetterStatus, 'failed'>, string> = {
  scheduled: 'La carta está programada y aún no ha entrado en producción: no hay nada que reintentar',
  received: 'La carta está esperando la validación de su dirección y no está atascada: no hay nada que reintentar',
  ready_for_print: 'La carta está en la cola de producción y no está atascada: no hay nada que reintentar',
  printing: 'La carta se está imprimiendo y no está atascada: no hay nada que reintentar',
  printed: 'La carta ya está impresa: no hay nada que reintentar',
  mailed: 'La carta ya se entregó a correos: no hay nada que reintentar',
  address_rejected: 'La carta fue rechazada por su dirección y sus créditos ya se devolvieron: no se puede reintentar',
  cancelled: 'La carta está cancelada: no se puede reintentar',
}

const duration = (ms: number) => (ms % 60_000 === 0 ? `${ms / 60_000} min` : `${ms / 1000} s`)

/**
 * Ops retry a letter (retryLetter: a failed one goes back to production, a stuck one is
 * resumed) and get it back as it is now; a letter neither failed nor stuck is a 409 that says
 * where it is.
 */
export async function retryCard(db: Db, afterMs: number, cardId: string): Promise<admin.Card> {
  assertCardId(cardId)
  const outcome = await retryLetter(db, cardId, afterMs)
  if (!outcome.retried) {
    if (!outcome.status) throw cardNotFound()
    if (outcome.erased) throw conflict('Los datos personales de la carta se borraron: ya no se puede volver a producir')
    // A failed letter is always retried, so the status is one of the others.
    const reason = notRetryable[outcome.status as Exclude<LetterStatus, 'failed'>]
    throw conflict(isResumable(outcome.status) ? `${reason} (se considera atascada tras ${duration(afterMs)} sin avanzar)` : reason)
  }
  return getAnyCard(db, cardId)
}
