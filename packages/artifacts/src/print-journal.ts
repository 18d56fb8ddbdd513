import { createHash } from 'node:crypto'
import type { ArtifactStore } from './artifact-store.js'

/**
 * What the printer took, kept outside Postgres so that a database restored from a backup can be
 * told which letters reached paper after that backup was taken.
 *
 * One record per file handed over, written once (after the printer accepted the file, before its
 * handoff row commits) and never changed: the letter's or batch's id, the file, every file of
 * the same print job, the printer, the time and the file's SHA-256. A batch's records also list
 * its letters, and each letter of a batch gets a pointer to it before the batch's first file is
 * handed over, so that a letter whose batch the restored database never saw still finds it.
 *
 * Records live in the artifact store under `print-journal/`: by letter
 * (`letters/<letterId>/<file>.json`, `letters/<letterId>/in-batch-<batchId>.json`) and by batch
 * (`batches/<batchId>/<file>.json`), so one letter's are read with one listing. They hold ids
 * only, no personal data, and go when the letter's or batch's files are erased.
 */
const ROOT = 'print-journal'
const letterJournal = (letterId: string) => `${ROOT}/letters/${letterId}`
const batchJournal = (batchId: string) => `${ROOT}/batches/${batchId}`
const BATCH_POINTER = /^in-batch-([0-9a-f-]{36})\.json$/
const WATERMARK_KEY = `${ROOT}/watermark.json`

interface RecordBase {
  /** The file's name on the floor. */
  file: string
  /** Every file of the print job, in the order they are handed over: the job is on paper once all are. */
  files: string[]
  printer: string
  /** When the printer accepted it. */
  at: string
  sha256: string
}
export interface LetterFileRecord extends RecordBase {
  letterId: string
  claim: number
}
export interface BatchFileRecord extends RecordBase {
  batchId: string
  /** The batch's letters in its sequence: the first is n.º 1. */
  letterIds: string[]
}

/** What the journal says of a letter's own files. */
export interface LetterOnPaper {
  /** The files of the letter the printer took. */
  handed: Set<string>
  /** Every file of one of its print jobs was taken. */
  complete: boolean
}

/** What the journal says of a batch. */
export interface BatchOnPaper {
  batchId: string
  handed: Set<string>
  complete: boolean
  /** Its letters in sequence, as its records list them (empty while none of its files was taken). */
  letterIds: string[]
}

const digest = (data: Buffer) => createHash('sha256').update(data).digest('hex')

function completeness(records: RecordBase[]): { handed: Set<string>; complete: boolean } {
  const handed = new Set(records.map((record) => record.file))
  return { handed, complete: records.some((record) => record.files.every((file) => handed.has(file))) }
}

export class PrintJournal {
  constructor(private readonly store: ArtifactStore) {}

  /** Records a file of a letter the printer accepted. */
  async recordLetterFile(entry: Omit<LetterFileRecord, 'at' | 'sha256'>, data: Buffer): Promise<void> {
    const record: LetterFileRecord = { ...entry, at: new Date().toISOString(), sha256: digest(data) }
    await this.write(`${letterJournal(entry.letterId)}/${entry.file}.json`, record)
  }

  /** Points each letter of a batch at it: before the batch's first file is handed over. */
  async pointLettersToBatch(batchId: string, letterIds: readonly string[]): Promise<void> {
    const pointer = { batchId, at: new Date().toISOString() }
    // A few at a time: a batch holds up to a thousand letters, and an object store takes each as a request.
    for (let i = 0; i < letterIds.length; i += 50) {
      await Promise.all(letterIds.slice(i, i + 50).map((letterId) => this.write(`${letterJournal(letterId)}/in-batch-${batchId}.json`, pointer)))
    }
  }

  /** Records a file of a batch the printer accepted. */
  async recordBatchFile(entry: Omit<BatchFileRecord, 'at' | 'sha256'>, data: Buffer): Promise<void> {
    const record: BatchFileRecord = { ...entry, at: new Date().toISOString(), sha256: digest(data) }
    await this.write(`${batchJournal(entry.batchId)}/${entry.file}.json`, record)
  }

  /** The records of a letter's own files the printer took. */
  async letterRecords(letterId: string): Promise<LetterFileRecord[]> {
    const names = await this.store.list(letterJournal(letterId))
    return this.read<LetterFileRecord>(
      letterJournal(letterId),
      names.filter((name) => !BATCH_POINTER.test(name)),
    )
  }

  /** What the printer took of a letter's own files. */
  async letter(letterId: string): Promise<LetterOnPaper> {
    return completeness(await this.letterRecords(letterId))
  }

  /** The batches a letter was put in, as their pointers say. */
  async batchesOf(letterId: string): Promise<string[]> {
    const names = await this.store.list(letterJournal(letterId))
    return names.flatMap((name) => BATCH_POINTER.exec(name)?.[1] ?? [])
  }

  /** The records of a batch's files the printer took. */
  async batchRecords(batchId: string): Promise<BatchFileRecord[]> {
    return this.read<BatchFileRecord>(batchJournal(batchId), await this.store.list(batchJournal(batchId)))
  }

  /** What the printer took of a batch's files. */
  async batch(batchId: string): Promise<BatchOnPaper> {
    const records = await this.batchRecords(batchId)
    return { batchId, ...completeness(records), letterIds: records[0]?.letterIds ?? [] }
  }

  /** A batch the journal has whole, among those a letter was put in: the letter is on paper. */
  async printedBatchOf(letterId: string): Promise<BatchOnPaper | undefined> {
    for (const batchId of await this.batchesOf(letterId)) {
      const batch = await this.batch(batchId)
      if (batch.complete && batch.letterIds.includes(letterId)) return batch
    }
    return undefined
  }

  /** Removes a letter's records (its personal data is erased: nothing of it will be printed again). */
  removeLetter(letterId: string): Promise<void> {
    return this.store.removeFolder(letterJournal(letterId))
  }

  removeBatch(batchId: string): Promise<void> {
    return this.store.removeFolder(batchJournal(batchId))
  }

  /** The highest count of the database's watermark this store has seen (0: none). */
  async watermark(): Promise<number> {
    const data = await this.store.get(WATERMARK_KEY)
    return data ? Number((JSON.parse(data.toString('utf8')) as { counter: number }).counter) : 0
  }

  async setWatermark(counter: number): Promise<void> {
    await this.write(WATERMARK_KEY, { counter, at: new Date().toISOString() })
  }

  private async write(key: string, value: unknown): Promise<void> {
    await this.store.put(key, Buffer.from(JSON.stringify(value), 'utf8'))
  }

  /**
   * The records in `folder`. One that cannot be read as a record (cut short by a crash of the
   * store's host) counts as absent: the file it names is then taken for not printed, as it
   * would be without a journal, rather than stopping every reader of this letter for good.
   */
  private async read<T>(folder: string, names: string[]): Promise<T[]> {
    const records = await Promise.all(names.filter((name) => name.endsWith('.json')).map((name) => this.store.get(`${folder}/${name}`)))
    return records.flatMap((data) => {
      if (!data) return []
      try {
        const record = JSON.parse(data.toString('utf8')) as T & { file?: unknown; files?: unknown }
        return typeof record.file === 'string' && Array.isArray(record.files) ? [record] : []
      } catch {
        return []
      }
    })
  }
}
