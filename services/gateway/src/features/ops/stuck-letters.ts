import { sql, type SQL } from 'drizzle-orm'
import { alias } from 'drizzle-orm/pg-core'
import type { admin, LetterStatus } from '@letters/contracts'
import type { FastifyInstance } from 'fastify'
import { keyset, keysetPage, letters, type Executor } from '@letters/db'
import { PrintJournal } from '@letters/artifacts'
import { Reconciler, removeFailedJobsOf, TimedOut } from '@letters/pipeline'
import { conflict, Unavailable } from '../../common/errors.js'
import { assertCardId, cardNotFound, getAnyCard } from '../letters/index.js'
import { decodeCursor, pageOf, positionSql, type Positioned } from '../../common/cursor.js'
import { isoInstant, isResumable, recordRestoreByOps, retryLetter, withoutProgressSql } from '@letters/letters'

type StuckLetter = admin.StuckLetterList['data'][number]

/*
 * The letters ops (and the floor) must look at: `failed` (production gave up; a retry sends it
 * back) or without progress past RECONCILE_AFTER_MS (the reconciler's notion, withoutProgressSql).
 * Both are read apart, each in letters_needs_look_idx order, and put together: one OR over both
 * would have Postgres visit the row of every letter ever failed.
 */

/** The mode filter of both reads below (alias `f`): one mode, or both when none is given. */
const modeSql = (livemode: boolean | undefined): SQL => (livemode === undefined ? sql`` : sql`AND f.livemode = ${livemode}`)

/**
 * The ids of the first `limit` letters to look at in (updated_at, id) order, past
 * `after`, of one mode or both: the first `limit` failed ones and the first `limit` stuck ones,
 * each an ordered read of letters_needs_look_idx. The letters ever failed are never all read
 * (one OR over both would have Postgres fetch and sort every one), so a page costs the same
 * however long the history.
 */
export function needsLookFirstSql(afterMs: number, options: { limit: number; livemode?: boolean; after?: Positioned | undefined }): SQL {
  const mode = modeSql(options.livemode)
  const { after, orderBy } = keyset({ instant: sql`f.updated_at`, id: sql`f.id` }, options.after, 'oldest first')
  const past = after ? sql`AND ${after}` : sql``
  // Raw SQL kept: a UNION ALL of two ordered, limited reads, which the builder cannot nest in IN.
  return sql`SELECT id FROM (
      (SELECT f.id FROM letters f WHERE f.status = 'failed' ${mode} ${past} ORDER BY ${orderBy} LIMIT ${options.limit})
      UNION ALL
      (SELECT f.id FROM letters f WHERE ${withoutProgressSql('f', afterMs)} ${mode} ${past} ORDER BY ${orderBy} LIMIT ${options.limit})
    ) first`
}

/**
 * How many letters ops must look at, of one mode or both: the failed ones and the
 * stuck ones counted apart and added, each an index-only read of letters_needs_look_idx.
 */
export function needsLookCountSql(afterMs: number, options: { livemode?: boolean } = {}): SQL<number> {
  const mode = modeSql(options.livemode)
  // Raw SQL kept: two scalar counts added, which the builder cannot say as one expression.
  return sql<number>`((SELECT count(*) FROM letters f WHERE f.status = 'failed' ${mode})
    + (SELECT count(*) FROM letters f WHERE ${withoutProgressSql('f', afterMs)} ${mode}))::int`.mapWith(Number)
}

/** The letters ops must look at, the longest stuck first (needsLookFirstSql). */
export async function listStuckLetters(ex: Executor, afterMs: number, query: admin.StuckLetterListQuery): Promise<admin.StuckLetterList> {
  const limit = query.limit ?? 20
  const after = query.cursor ? decodeCursor(query.cursor) : undefined
  const l = alias(letters, 'l')
  // Past the cursor inside needsLookFirstSql; the outer read only puts both reads in order.
  const page = keysetPage({ instant: l.updatedAt, id: l.id }, undefined, 'oldest first', limit)
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
    .where(sql`${l.id} IN (${needsLookFirstSql(afterMs, { limit: page.limit, after })})`)
    .orderBy(page.orderBy)
    .limit(page.limit)
  const { rows: pageRows, nextCursor } = pageOf(rows, limit)
  return { data: pageRows.map((row) => row.letter), nextCursor }
}

/** Why a letter in each status that is neither failed nor stuck is not retried. */
const notRetryable: Record<Exclude<LetterStatus, 'failed'>, string> = {
  scheduled: 'La carta está programada y aún no ha entrado en producción: no hay nada que reintentar',
  received: 'La carta está esperando la validación de su dirección y no está atascada: no hay nada que reintentar',
  ready_for_print: 'La carta está en la cola de producción y no está atascada: no hay nada que reintentar',
  printing: 'La carta se está imprimiendo y no está atascada: no hay nada que reintentar',
  printed: 'La carta ya está impresa: no hay nada que reintentar',
  mailed: 'La carta ya se entregó a correos: no hay nada que reintentar',
  returned: 'Correos devolvió la carta: no hay nada que reintentar',
  address_rejected: 'La carta fue rechazada por su dirección y sus créditos ya se devolvieron: no se puede reintentar',
  cancelled: 'La carta está cancelada: no se puede reintentar',
}

const duration = (ms: number) => (ms % 60_000 === 0 ? `${ms / 60_000} min` : `${ms / 1000} s`)

/**
 * Ops retry a letter (retryLetter: a failed one goes back to production, a stuck one is
 * resumed) and get it back as it is now; a letter neither failed nor stuck is a 409 that says
 * where it is.
 */
export async function retryCard(app: FastifyInstance, cardId: string): Promise<admin.Card> {
  const { db } = app
  const afterMs = app.config.reconcileAfterMs
  assertCardId(cardId)
  const outcome = await retryLetter(db, cardId, afterMs)
  if (!outcome.retried) {
    if (!outcome.status) throw cardNotFound()
    if (outcome.erased) throw conflict('Los datos personales de la carta se borraron: ya no se puede volver a producir')
    // A failed letter is always retried, so the status is one of the others.
    const reason = notRetryable[outcome.status as Exclude<LetterStatus, 'failed'>]
    throw conflict(isResumable(outcome.status) ? `${reason} (se considera atascada tras ${duration(afterMs)} sin avanzar)` : reason)
  }
  // Its new job is queued: the failed ones it leaves behind would keep the failed count up.
  await removeFailedJobsOf(app.queues.production, cardId).catch((err: unknown) =>
    app.log.warn({ err, letterId: cardId }, 'could not remove the failed jobs of a retried letter; the failed count keeps them'),
  )
  return getAnyCard(db, cardId)
}

/**
 * POST /admin/reconcile, for ops after a restore: the restore is recorded (every letter waiting
 * now counts as stuck until looked at), then one reconciliation looks at them all at once: a
 * letter the print journal has on paper is marked printed, one whose job is lost is resumed.
 * Redis not answering is a 503, and the letters stay stuck for the next try or the reconciler.
 */
export async function reconcileNow(app: FastifyInstance): Promise<admin.Reconciled> {
  const afterMs = app.config.reconcileAfterMs
  await recordRestoreByOps(app.db)
  const reconciler = new Reconciler(app.db, app.queues, app.log.child({ component: 'reconciler' }), {
    afterMs,
    intervalMs: app.config.reconcileIntervalMs,
    journal: new PrintJournal(app.artifacts),
  })
  const done = await reconciler.reconcile().catch((err: unknown) => {
    if (err instanceof TimedOut) throw new Unavailable('Redis no responde: no se pudo saber qué trabajos se perdieron. Inténtalo de nuevo')
    throw err
  })
  const [stuck] = await app.db.execute<{ n: number }>(sql`SELECT ${needsLookCountSql(afterMs)} AS n`)
  return { ...done, stuck: Number(stuck?.n ?? 0) }
}
