import { randomUUID } from 'node:crypto'
import { and, asc, eq, inArray, isNull, lt, or, sql } from 'drizzle-orm'
import type { VerifiedAddress } from '@letters/contracts'
import { isConnectionError, letters, printBatches, printBatchLetters, printBatchMove, printBatchStatus, type Db, type Tx } from '@letters/db'
import { batchFileKey, PrintJournal } from '@letters/artifacts'
import { BackgroundLoop } from '@letters/pipeline'
import { withTries } from './tries.js'
import { drawingOf } from '@letters/render'
import { buildBatchFiles } from './batch-files.js'
import { closeIfDue, type BatchRules } from './batch-tray.js'
import { handedOverBatchFiles, handOverBatchFile } from './print-handoffs.js'
import type { Floor } from './floor.js'
import { batchPrintedDetail, moveLetters, readLetterDrawings } from '@letters/letters'

/** Any constant: with the batch's id, the advisory lock of the one closer finishing that batch. */
const CLOSER_LOCK_SPACE = 727_013

/**
 * `handed`: the batch's three files are with the printer and its letters printed (by this
 * closer, or earlier). `busy`: another closer is finishing it now.
 */
export type FinishOutcome = 'handed' | 'busy' | 'not_closing'

/**
 * How long a closer's hold on a batch lasts unless renewed: as long as the printer may keep a
 * file (PRINT_TIMEOUT_MS) and then some, so that a closer cut off from Postgres for all that time
 * has seen its print command end before another may take the batch. A closer that died is
 * taken over that much later; one that stops cleanly lets go at once.
 */
const closerLeaseMs = (floor: Floor) => floor.printTimeoutMs + 30_000
/** How often a closer renews its lease while it works. */
const CLOSER_RENEW_MS = 2_000

/**
 * Finishes a closed batch: draws its three files in its fixed order, keeps them in the artifact
 * store, hands each to the printer once (a record per file, as a letter's files), then in one
 * transaction marks the batch `handed` and its letters `printed`, each with an event naming the
 * batch and its sequence.
 *
 * One closer at a time per batch, held two ways: an advisory lock in a transaction for the whole
 * of it (two closers never start together), and a committed lease on the batch that the closer
 * renews while it works. The lease is what keeps a batch from being taken over while the printer
 * still has one of its files: when the closer's connections drop, its lock and its uncommitted
 * record of that file go with them, but the closer keeps renewing until it has recorded the
 * file. A closer that died stops renewing, and the next round of any worker's closer takes the
 * batch over once the lease has passed, handing over only the missing files.
 */
export async function finishBatch(floor: Floor, batchId: string): Promise<FinishOutcome> {
  const { db } = floor
  // The work under the lock. If the lock's connection drops, postgres.js fails the transaction at
  // once while the work goes on (a file may be at the printer): the lease is renewed and the
  // caller kept waiting until that work has stopped.
  let work: Promise<FinishOutcome> | undefined
  const lease: Lease = { id: randomUUID(), ms: closerLeaseMs(floor), held: false }
  const renewal = setInterval(() => {
    if (!lease.held) return
    renewLease(db, batchId, lease).then(
      (still) => {
        if (!still) floor.log.error({ batchId }, 'the closer lease lapsed and another closer took the batch')
      },
      (err: unknown) => floor.log.warn({ err, batchId }, 'could not renew the closer lease; retrying'),
    )
  }, CLOSER_RENEW_MS)
  try {
    return await db.transaction((lockTx) => (work = underLock(floor, batchId, lockTx, lease)))
  } catch (error) {
    await work?.catch(() => undefined)
    throw error
  } finally {
    clearInterval(renewal)
    // Nothing of this closer is at the printer any more: the next round need not wait for the lease to pass.
    if (lease.held) await releaseCloserLease(db, batchId, lease, floor.log)
  }
}

/** Attempts at releasing a lease, while its statement's connection keeps dropping. */
const RELEASE_ATTEMPTS = 5
const RELEASE_RETRY_MS = 200

/**
 * Releases the closer's own lease. A connection that drops under the release (a failover, a
 * pooler restart) would otherwise leave the lease for its whole term (the print timeout and 30
 * s, two and a half minutes by default), in which no closer finishes the batch: the release is
 * keyed by the lease's id, so it is sent again on a new connection. Any other failure, or a
 * connection still down after the attempts, leaves the lease to pass; true when released.
 */
export async function releaseCloserLease(db: Db, batchId: string, lease: Pick<Lease, 'id'>, log?: Floor['log']): Promise<boolean> {
  try {
    await withTries(() => releaseLease(db, batchId, lease), { attempts: RELEASE_ATTEMPTS, pauseMs: RELEASE_RETRY_MS, again: isConnectionError })
    return true
  } catch (error) {
    log?.warn({ err: error, batchId }, 'could not release the closer lease; the batch waits for it to pass')
    return false
  }
}

/** A closer's lease on a batch: its own id, so that only it renews or releases it. */
interface Lease {
  id: string
  ms: number
  held: boolean
}

const leaseEnd = (lease: Lease) => sql`now() + make_interval(secs => ${lease.ms / 1000})`

/** Takes the lease of a closing batch nobody holds; the batch's status when it cannot. */
async function takeLease(db: Db, batchId: string, lease: Lease): Promise<FinishOutcome | 'leased'> {
  const [taken] = await db
    .update(printBatches)
    .set({ closerLeaseUntil: leaseEnd(lease), closerLeaseId: lease.id })
    .where(
      and(
        eq(printBatches.id, batchId),
        eq(printBatches.status, printBatchStatus.closing),
        or(isNull(printBatches.closerLeaseUntil), lt(printBatches.closerLeaseUntil, sql`now()`)),
      ),
    )
    .returning({ id: printBatches.id })
  if (taken) return 'leased'
  const [batch] = await db.select({ status: printBatches.status }).from(printBatches).where(eq(printBatches.id, batchId))
  return batch?.status === printBatchStatus.handed ? 'handed' : batch?.status === printBatchStatus.closing ? 'busy' : 'not_closing'
}

/** Renews the closer's own lease; false when it is no longer its own. */
async function renewLease(db: Db, batchId: string, lease: Lease): Promise<boolean> {
  const renewed = await db
    .update(printBatches)
    .set({ closerLeaseUntil: leaseEnd(lease) })
    .where(and(eq(printBatches.id, batchId), eq(printBatches.closerLeaseId, lease.id)))
    .returning({ id: printBatches.id })
  return renewed.length > 0
}

const releaseLease = (db: Db, batchId: string, lease: Pick<Lease, 'id'>) =>
  db
    .update(printBatches)
    .set({ closerLeaseUntil: null, closerLeaseId: null })
    .where(and(eq(printBatches.id, batchId), eq(printBatches.closerLeaseId, lease.id)))

/** finishBatch's work, in the transaction that holds (or fails to take) the batch's lock. */
async function underLock(floor: Floor, batchId: string, lockTx: Tx, lease: Lease): Promise<FinishOutcome> {
  const { db } = floor
  // The lock's transaction stays idle while the files are drawn and printed. Raw SQL kept:
  // set_config and an advisory lock, which drizzle has no builder for.
  const patience = String(3 * (floor.printTimeoutMs + 30_000) + 120_000)
  await lockTx.execute(sql`SELECT set_config('idle_in_transaction_session_timeout', ${patience}, true)`)
  const [lock] = await lockTx.execute<{ held: boolean }>(sql`SELECT pg_try_advisory_xact_lock(${CLOSER_LOCK_SPACE}, hashtext(${batchId})) AS held`)
  if (!lock?.held) return 'busy'
  const taken = await takeLease(db, batchId, lease)
  if (taken !== 'leased') return taken
  lease.held = true

  const members = await db
    .select({
      letterId: letters.id,
      sequence: printBatchLetters.sequence,
      code: letters.code,
      address: letters.address,
    })
    .from(printBatchLetters)
    .innerJoin(letters, eq(letters.id, printBatchLetters.letterId))
    .where(eq(printBatchLetters.batchId, batchId))
    .orderBy(asc(printBatchLetters.sequence))
  const sources = new Map(
    (
      await readLetterDrawings(
        db,
        members.map((member) => member.letterId),
      )
    ).map((source) => [source.letterId, source]),
  )
  const sorted = members.map((member) => {
    const address = member.address as VerifiedAddress
    const drawing = drawingOf(sources.get(member.letterId)!, floor.floorCountry, floor.publicBaseUrl)
    return { letterId: member.letterId, code: member.code, address, printSpec: sources.get(member.letterId)!.printSpec, drawing }
  })

  const handed = await handedOverBatchFiles(
    floor,
    batchId,
    members.map((member) => member.letterId),
  )
  const files = await buildBatchFiles(batchId, sorted)
  // The journal's copy of the batch: its files and its letters in sequence. Each letter points at
  // the batch before any of its files reaches the printer, so a letter whose batch a restored
  // database never saw still finds it.
  const journaled = { files: files.map((file) => file.name), letterIds: sorted.map((letter) => letter.letterId) }
  if (files.some((file) => !handed.has(file.name))) await new PrintJournal(floor.store).pointLettersToBatch(batchId, journaled.letterIds)
  // The lock is checked before each file and before the batch is marked handed: a closer whose
  // lock went with its connection stops (its round fails and the next one takes over).
  const lockStillHeld = () => lockTx.execute(sql`SELECT 1`)
  for (const file of files) {
    if (handed.has(file.name)) continue
    await lockStillHeld()
    const location = await floor.store.put(batchFileKey(batchId, file.name), file.data)
    // `superseded` only if another closer handed the batch meanwhile, which the lock rules out.
    await handOverBatchFile(floor, batchId, { name: file.name, data: file.data, location }, journaled)
  }

  const count = members.length
  const sequenceOf = new Map(members.map((member) => [member.letterId, member.sequence ?? 0]))
  await lockStillHeld()
  const handOver = printBatchMove('closing', 'handed')
  await db.transaction(async (tx) => {
    const [done] = await tx
      .update(printBatches)
      .set({ status: handOver.to, handedAt: new Date() })
      .where(and(eq(printBatches.id, batchId), eq(printBatches.status, handOver.from)))
      .returning({ id: printBatches.id })
    if (!done) return
    // From `failed` too (the table allows it): a letter given up on while it waited in the tray is on paper now all the same.
    await moveLetters(tx, [...sequenceOf.keys()], {
      to: 'printed',
      detail: (letterId) => batchPrintedDetail(batchId, sequenceOf.get(letterId) ?? 0, count),
    })
  })
  floor.log.info({ batchId, letters: count }, 'batch handed over')
  return 'handed'
}

/** Batches closed and not yet handed over, oldest first. */
async function closingBatches(db: Db): Promise<string[]> {
  const rows = await db
    .select({ id: printBatches.id })
    .from(printBatches)
    .where(inArray(printBatches.status, [printBatchStatus.closing]))
    .orderBy(asc(printBatches.closedAt))
  return rows.map((row) => row.id)
}

/**
 * Every batch-mode production worker runs one: it closes the open batch once its first letter
 * has waited BATCH_MAX_WAIT_MS, and finishes every closed batch, its own (a worker filling a
 * batch pokes it) or one whose closer died. A round that fails is logged and tried again.
 */
export class BatchCloser {
  private readonly loop: BackgroundLoop

  constructor(
    private readonly floor: Floor,
    private readonly rules: BatchRules,
    /** Between rounds: a fraction of the wait, so a due batch closes within it; at most a second. */
    intervalMs = Math.max(50, Math.min(1000, Math.floor(rules.maxWaitMs / 10))),
  ) {
    this.loop = new BackgroundLoop({
      name: 'batch closer',
      log: floor.log,
      tick: () => this.round(),
      intervalMs,
      // A printer that keeps refusing is asked again less and less often, up to once a minute.
      backoffMs: (failures) => Math.min(60_000, intervalMs * 2 ** failures),
      failureLevel: 'error',
      failureMessage: 'batch closer round failed',
    })
  }

  start(): void {
    this.loop.start()
  }

  /** A batch was just closed: finish it now rather than at the next round. */
  poke(): void {
    this.loop.poke()
  }

  stop(): Promise<void> {
    return this.loop.stop()
  }

  /**
   * One round: close the open batches that are due, then finish the closed ones. A batch that
   * fails is passed over for this round, so one that cannot be finished does not hold up the
   * batches behind it; the round then fails with it (logged, counted, tried again).
   */
  async round(): Promise<void> {
    await closeIfDue(this.floor.db, this.rules)
    const failures: unknown[] = []
    for (const batchId of await closingBatches(this.floor.db)) {
      if (!this.loop.running) break
      try {
        await finishBatch(this.floor, batchId)
      } catch (error) {
        this.floor.log.error({ err: error, batchId }, 'batch could not be finished; the next batches go on')
        failures.push(error)
      }
    }
    if (failures.length > 0) throw failures[0]
  }
}
