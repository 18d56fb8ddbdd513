import { and, eq, sql } from 'drizzle-orm'
import { batchFolder, PrintJournal, type ArtifactStore } from '@letters/artifacts'
import type { ErasableStatus, LetterStatus, admin } from '@letters/contracts'
import { letters, type Db } from '@letters/db'
import { BackgroundLoop, type Logger } from '@letters/pipeline'
import { conflict } from '../../common/errors.js'
import type { KeyScope } from '../../common/caller.js'
import { accountNotFound, findAccount } from '../accounts/index.js'
import { assertCardId, cardNotFound } from '../letters/index.js'
import {
  batchesWithArtifacts,
  dueForErasureSql,
  erasePersonalData,
  letterFolder,
  lettersWithArtifacts,
  personalDataHeld,
  recordBatchArtifactsRemoved,
  recordLetterArtifactsRemoved,
  sweepBatchesWithArtifacts,
} from '@letters/letters'

/** What an erasure works on: the database, and the artifact store its files are removed from. */
export interface ErasureDeps {
  db: Db
  artifacts: ArtifactStore
  log: Logger
}

/** Letters erased per transaction: each holds their rows' locks only that long. */
const ERASE_BATCH = 100
/**
 * Batches looked through per round for files left behind. A stretch costs a read of a letter per
 * batch, so a short one keeps every round cheap however many batches still hold their files; at a
 * round a minute, a floor that hands 50 batches a day is looked through whole every few hours,
 * and a removal that failed is done again within them.
 */
const SWEEP_BATCH = 10

const notPrintedYet = 'La carta aún no se ha impreso: cancélala primero (DELETE /cards/{cardId}) y después borra sus datos personales'

/** Why a letter in each status that still needs its personal data cannot lose it now. */
const notErasable: Record<Exclude<LetterStatus, ErasableStatus>, string> = {
  scheduled: notPrintedYet,
  received: notPrintedYet,
  ready_for_print: notPrintedYet,
  printing: 'La carta se está imprimiendo y no se puede cancelar: podrás borrar sus datos personales en cuanto esté impresa',
}

/** A letter in an erasable status that waits in a print batch not handed over yet: its batch draws it from its data. */
const inPendingBatch =
  'La carta está en un lote de impresión que aún no se ha entregado a la impresora: podrás borrar sus datos personales en cuanto esté impresa'

/**
 * Removes from the artifact store the files of these erased letters and of these batches, and
 * records each removal. A removal that fails is left for the eraser's next round; the first
 * failure is thrown once the others were tried.
 */
async function removeArtifacts(deps: ErasureDeps, files: { letterIds: readonly string[]; batchIds: readonly string[] }): Promise<void> {
  const failures: unknown[] = []
  const journal = new PrintJournal(deps.artifacts)
  const removeEach = async (ids: readonly string[], remove: (id: string) => Promise<void>, record: (db: Db, ids: string[]) => Promise<void>) => {
    const removed: string[] = []
    for (const id of ids) {
      try {
        await remove(id)
        removed.push(id)
      } catch (error) {
        failures.push(error)
      }
    }
    await record(deps.db, removed)
  }
  // The print journal's records go with the files: what they guard against (printing again after
  // a restore) cannot happen to a letter whose data is gone.
  const removeLetter = async (id: string) => {
    await deps.artifacts.removeFolder(letterFolder(id))
    await journal.removeLetter(id)
  }
  const removeBatch = async (id: string) => {
    await deps.artifacts.removeFolder(batchFolder(id))
    await journal.removeBatch(id)
  }
  await removeEach(files.letterIds, removeLetter, recordLetterArtifactsRemoved)
  await removeEach(files.batchIds, removeBatch, recordBatchArtifactsRemoved)
  if (failures.length > 0) throw failures[0]
}

/** Removes the files of these letters, just erased (or erased before: a removal that failed is done now), and of the batches they leave erased whole. */
async function removeArtifactsOf(deps: ErasureDeps, letterIds: readonly string[]): Promise<void> {
  await removeArtifacts(deps, {
    letterIds: await lettersWithArtifacts(deps.db, { letterIds, limit: letterIds.length }),
    batchIds: await batchesWithArtifacts(deps.db, letterIds),
  })
}

/**
 * DELETE /cards/{id}/personal-data: erases one letter of the key's account and mode now, then its
 * files. A letter erased before is erased still (its files are looked for again: a removal that
 * failed is done by this call); one not printed yet is a 409 that says what to do.
 */
export async function eraseCardPersonalData(deps: ErasureDeps, scope: KeyScope, cardId: string): Promise<void> {
  assertCardId(cardId)
  await deps.db.transaction(async (tx) => {
    // Locked first, so that what the 409 says is what the erasure saw.
    const [letter] = await tx
      .select({ status: letters.status, erased: sql<boolean>`${letters.personalDataErasedAt} IS NOT NULL` })
      .from(letters)
      .where(and(eq(letters.id, cardId), eq(letters.accountId, scope.accountId), eq(letters.livemode, scope.livemode)))
      .for('no key update')
    if (!letter) throw cardNotFound()
    if (letter.erased) return
    const erased = await erasePersonalData(tx, eq(letters.id, cardId), { limit: 1, lock: 'wait' })
    if (erased.length === 0) throw conflict(letter.status in notErasable ? notErasable[letter.status as keyof typeof notErasable] : inPendingBatch)
  })
  await removeArtifactsOf(deps, [cardId])
}

/**
 * Ops erase every letter of an account that may be erased (both modes), a bounded batch per
 * transaction, each batch's files after it commits, until none is left or `budgetMs` has passed;
 * then say how many were erased, how many were left (not printed yet) and how many remain for
 * another call.
 */
export async function eraseAccountPersonalData(deps: ErasureDeps, accountId: string, budgetMs: number): Promise<admin.PersonalDataErased> {
  if (!(await findAccount(deps.db, accountId))) throw accountNotFound()
  const until = Date.now() + budgetMs
  let erased = 0
  for (;;) {
    const ids = await deps.db.transaction((tx) => erasePersonalData(tx, eq(letters.accountId, accountId), { limit: ERASE_BATCH, lock: 'wait' }))
    erased += ids.length
    if (ids.length > 0) await removeArtifactsOf(deps, ids)
    if (ids.length < ERASE_BATCH || Date.now() >= until) break
  }
  if (erased > 0) deps.log.info({ accountId, erased }, "account's personal data erased")
  const held = await personalDataHeld(deps.db, accountId)
  return { erased, left: held.kept, remaining: held.erasable }
}

export interface PersonalDataEraserOptions {
  /** PERSONAL_DATA_RETENTION_MS: how long a letter keeps its personal data once in an erasable status. */
  retentionMs: number
  /** Pause between rounds; by default a tenth of the retention, between 0.1 s and a minute, so a letter is erased at most that late. */
  intervalMs?: number
  /** Letters erased per transaction. */
  batchSize?: number
  /** Batches looked through per round for files left behind (SWEEP_BATCH). */
  sweepSize?: number
}

/**
 * Every gateway runs one: the letters whose erasable status is older than the retention lose their
 * personal data, a bounded batch per transaction (SKIP LOCKED: any number of gateways share the
 * work, and a letter another transaction holds waits for the next round), then their files are
 * removed from the artifact store, and the files of the batches they leave erased whole.
 * Files are removed only once their letters' erasure has committed, and a removal that failed
 * (or a file written after it: a proof, a print file of a superseded run) is done again by a
 * later round, since only a recorded removal counts. A letter's is found among the erased letters
 * whose removal is not recorded (an index holds just those). A batch's is found by a look through
 * the handed batches whose files are still there, which hold the letters within the retention
 * too: a bounded stretch of them each round, the next stretch at the next round, so that the
 * rounds come round to every such batch and none looks at them all.
 */
export class PersonalDataEraser {
  private readonly loop: BackgroundLoop
  private readonly batchSize: number
  /** Where the next round's look through the batches with files starts (null: from the first). */
  private batchSweep: string | null = null

  constructor(
    private readonly deps: ErasureDeps,
    private readonly options: PersonalDataEraserOptions,
  ) {
    this.batchSize = options.batchSize ?? ERASE_BATCH
    const intervalMs = options.intervalMs ?? Math.max(100, Math.min(60_000, Math.floor(options.retentionMs / 10)))
    this.loop = new BackgroundLoop({
      name: 'personal data eraser',
      log: deps.log,
      tick: () => this.tick(),
      intervalMs,
      // An artifact store that keeps failing is asked again less and less often, up to every ten minutes.
      backoffMs: (failures) => Math.min(600_000, intervalMs * 2 ** failures),
    })
  }

  /**
   * One round: a batch of due letters erased, then a batch of files removed; true if either was
   * full (more may wait). The look through the batches does not ask for another round at once: it
   * goes on at the next one.
   */
  async tick(): Promise<boolean> {
    const { db, log } = this.deps
    const erased = await db.transaction((tx) => erasePersonalData(tx, dueForErasureSql(this.options.retentionMs), { limit: this.batchSize, lock: 'skip' }))
    if (erased.length > 0) log.info({ erased: erased.length }, 'personal data past its retention erased')
    const letterIds = await lettersWithArtifacts(db, { limit: this.batchSize })
    const sweep = await sweepBatchesWithArtifacts(db, { after: this.batchSweep, limit: this.options.sweepSize ?? SWEEP_BATCH })
    this.batchSweep = sweep.next
    const batchIds = new Set([...(await batchesWithArtifacts(db, erased)), ...sweep.erased])
    await removeArtifacts(this.deps, { letterIds, batchIds: [...batchIds] })
    return erased.length === this.batchSize || letterIds.length === this.batchSize
  }

  start(): void {
    this.loop.start()
  }

  stop(): Promise<void> {
    return this.loop.stop()
  }
}
