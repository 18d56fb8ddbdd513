import { and, asc, eq, gt, inArray, isNotNull, isNull, sql, type SQL } from 'drizzle-orm'
import { suppressedAddressOf } from '@letters/address'
import type { LetterStatus, Recipient, VerifiedAddress } from '@letters/contracts'
import {
  letters,
  printBatches,
  printBatchHandoffs,
  printBatchLetters,
  printHandoffs,
  literalListSql,
  notHandedBatchStatuses,
  printBatchStatus,
  stillErasable,
  type Executor,
  type Tx,
} from '@letters/db'
import { isoInstant } from './events.js'
import { statusesInto } from './transitions.js'

/**
 * What an erased letter's recipient holds instead of its fields: nothing, but its country (which
 * the cost and the statistics stand on). The same for the recipient the address check returned.
 */
const erasedRecipientFields = {
  name: '',
  surname: '',
  company: null,
  address: '',
  zip: '',
  city: '',
  province: null,
} satisfies Omit<Recipient, 'country'>

/** And what the address check keeps of its work: its verdict, country and verifier; never the changes it made or the problems it found, which quote the address. */
const erasedCheckFields = { ...erasedRecipientFields, changes: [], problems: [] } satisfies Partial<VerifiedAddress>

/**
 * The letter of the `letters` row may be erased now: it is in an erasable status, still holds its
 * personal data, and is not in a print batch that has not been handed over (a letter given up on
 * while it waited in the tray is `failed`, but its batch's closer still draws it from its row).
 */
const erasableNow = sql`${stillErasable} AND NOT EXISTS (
  SELECT 1 FROM print_batch_letters m JOIN print_batches b ON b.id = m.batch_id
  WHERE m.letter_id = letters.id AND b.status IN ${literalListSql(notHandedBatchStatuses)})`

/**
 * Every table that keeps copies of a letter as an event told it, each copy a snapshot of the
 * letter's JSON (letterJsonSql) at a change: the one list the erasure rewrites. A table that keeps
 * events too must be added here, or the erased data stays in it. For each: the table, its column
 * holding the event's JSON as text, and the SQL of the letter's id in that JSON (`e` is the row).
 */
const eventBodyTables = [
  // What GET /events lists.
  { table: 'events', body: 'body', letterId: sql`e.letter_id` },
  // Each endpoint's copy. Indexed (webhook_events_letter_idx): the expression must stay the index's.
  { table: 'webhook_events', body: 'body', letterId: sql`((e.body::json -> 'data') ->> 'id')` },
]

/**
 * Rewrites the stored event bodies of the letters, already erased in this transaction, as if each
 * event had been written after the erasure: the letter's snapshot keeps its status and dates,
 * and takes the erased recipient, message and address check, and `personalDataErasedAt`: an
 * UPDATE … FROM on a JSON expression, which drizzle's builder cannot say, for each table of eventBodyTables. A body that is
 * rewritten changes bytes: a delivery still to be retried sends (and signs) the erased one; one
 * already in flight sends what it read, which is what the receiver had already.
 */
async function eraseFromEventBodies(tx: Tx, letterIds: readonly string[]): Promise<void> {
  for (const { table, body, letterId } of eventBodyTables) {
    const column = sql.identifier(body)
    const data = sql`(e.${column}::jsonb -> 'data')`
    await tx.execute(sql`
      UPDATE ${sql.identifier(table)} e SET ${column} = jsonb_set(e.${column}::jsonb, '{data}', ${data} || jsonb_build_object(
        'recipient', l.recipient, 'message', l.message, 'addressLines', NULL,
        'address', CASE WHEN ${data} -> 'address' = 'null'::jsonb THEN NULL ELSE l.address END,
        'personalDataErasedAt', ${isoInstant(sql`l.personal_data_erased_at`)}))::text
      FROM letters l
      WHERE ${letterId} IN ${letterIds} AND l.id IN ${letterIds} AND l.id::text = (${letterId})::text`)
  }
}

/** A letter about to be erased, as it was: what its events' details may quote. */
interface ErasableLetter {
  id: string
  recipient: Recipient
  address: VerifiedAddress | null
}

/**
 * The texts a letter's event details may quote of its recipient (an address rejected names its
 * postal code): every field as sent and as checked, and each change the check made, but the
 * country, which the letter keeps. Two characters at least, so that a one-letter value does not
 * cut letters out of the words around it; the longest first, so that a value inside another goes after it.
 */
function quotableValues(letter: ErasableLetter): string[] {
  const values = new Set<string>()
  const add = (value: string | null | undefined) => {
    if (value && value.trim().length >= 2) values.add(value)
  }
  for (const source of [letter.recipient, letter.address]) {
    if (!source) continue
    for (const field of Object.keys(erasedRecipientFields) as Array<keyof typeof erasedRecipientFields>) add(source[field])
  }
  for (const change of letter.address?.changes ?? []) {
    if (change.field === 'country') continue
    add(change.from)
    add(change.to)
  }
  return [...values].sort((a, b) => b.length - a.length)
}

/** Cuts what the letters' event details quote of their recipients, in this transaction. */
async function eraseFromEventDetails(tx: Tx, erased: readonly ErasableLetter[]): Promise<void> {
  const quoted = new Map(erased.map((letter) => [letter.id, quotableValues(letter)]))
  const details = await tx.execute<{ id: string; letter_id: string; detail: string }>(
    sql`SELECT id, letter_id, detail FROM letter_events WHERE letter_id IN ${erased.map((letter) => letter.id)} AND detail IS NOT NULL`,
  )
  const rewritten = details.flatMap((event) => {
    const detail = (quoted.get(event.letter_id) ?? []).reduce((text, value) => text.replaceAll(value, '…'), event.detail)
    return detail === event.detail ? [] : [{ id: Number(event.id), detail }]
  })
  if (rewritten.length === 0) return
  // Raw SQL kept: UPDATE … FROM jsonb_to_recordset rewrites every detail in one statement.
  await tx.execute(sql`
    UPDATE letter_events e SET detail = r.detail
    FROM jsonb_to_recordset(${JSON.stringify(rewritten)}::jsonb) AS r(id bigint, detail text)
    WHERE e.id = r.id`)
}

export type EraseLock = 'wait' | 'skip'

/**
 * Erases the personal data of the letters `where` picks (at most `limit`, oldest change first)
 * among those that may be erased now, in the caller's transaction, whole: each letter is then
 * either as it was or erased everywhere, whatever cuts the connection. Erased: its recipient
 * (but the country), its message (which holds the campaign's variables), its address check and
 * printed address block, what its event details quote of them, every stored event body that
 * copied them, and the request hashes of the Idempotency-Keys that created it (a hash of the
 * recipient: a replay of that request is then a 422, never a second letter). What stays: its id,
 * status, events and their dates, cost and ledger entries. Its files are the caller's to remove,
 * after this commits (lettersWithArtifacts).
 *
 * The letters' rows stay locked until the transaction ends, so a change of status waits and then
 * writes its event from the erased row; `skip` passes over a letter another transaction holds
 * (a background round), `wait` waits for it. Returns the ids erased.
 */
export async function erasePersonalData(tx: Tx, where: SQL | undefined, options: { limit: number; lock: EraseLock }): Promise<string[]> {
  const picked = await tx
    .select({ id: letters.id, accountId: letters.accountId, status: letters.status, recipient: letters.recipient, address: letters.address })
    .from(letters)
    .where(and(erasableNow, where))
    .orderBy(asc(letters.updatedAt), asc(letters.id))
    .limit(options.limit)
    .for('no key update', options.lock === 'skip' ? { skipLocked: true } : {})
  if (picked.length === 0) return []
  const ids = picked.map((letter) => letter.id)
  await tx
    .update(letters)
    .set({
      recipient: sql`${JSON.stringify(erasedRecipientFields)}::jsonb || jsonb_build_object('country', ${letters.recipient} -> 'country')`,
      message: '',
      address: sql`${letters.address} || ${JSON.stringify(erasedCheckFields)}::jsonb`,
      addressLines: null,
      personalDataErasedAt: sql`now()`,
    })
    .where(inArray(letters.id, ids))
  await keepReturnAddresses(tx, picked)
  await eraseFromEventDetails(tx, picked)
  await eraseFromEventBodies(tx, ids)
  // Raw SQL kept: the ids in the stored answers (POST /single and /card: cardId; a bulk request:
  // cardIds) are JSON. The account's keys of the last day, by the table's primary key.
  const accountIds = [...new Set(picked.map((letter) => letter.accountId))]
  await tx.execute(sql`
    UPDATE idempotency_keys SET request_hash = 'erased'
    WHERE account_id IN ${accountIds} AND request_hash <> 'erased'
      AND (response_body ->> 'cardId' IN ${ids}
        OR EXISTS (SELECT 1 FROM jsonb_array_elements_text(CASE WHEN jsonb_typeof(response_body -> 'cardIds') = 'array' THEN response_body -> 'cardIds' END) c
                   WHERE c IN ${ids}))`)
  return ids
}

/** The statuses a letter may still be brought back by the post from: the moves into `returned`. */
const returnableStatuses: readonly LetterStatus[] = statusesInto('returned')

/**
 * The letters the post still has may come back: each keeps its address as the suppression list
 * keeps one (suppressedAddressOf: its key, a hash without the street, and its postal code), so
 * that a return after the erasure still puts the address on the list.
 */
async function keepReturnAddresses(tx: Tx, picked: ReadonlyArray<{ id: string; accountId: string; status: LetterStatus; recipient: Recipient }>) {
  const returnable = picked.filter((letter) => returnableStatuses.includes(letter.status))
  if (returnable.length === 0) return
  const kept = returnable.map((letter) => ({ id: letter.id, ...suppressedAddressOf(letter.accountId, letter.recipient) }))
  // Raw SQL kept: one UPDATE … FROM unnest of the letters' ids, keys and postal codes.
  await tx.execute(sql`
    UPDATE letters SET return_address_key = kept.key, return_zip = kept.zip
    FROM unnest(${sql.param(kept.map((letter) => letter.id))}::uuid[], ${sql.param(kept.map((letter) => letter.key))}::text[],
      ${sql.param(kept.map((letter) => letter.zip))}::text[]) AS kept(id, key, zip)
    WHERE letters.id = kept.id`)
}

/** Due for erasure: the letter's last change of status (into an erasable one, by erasableNow) is older than `retentionMs`. */
export const dueForErasureSql = (retentionMs: number) => sql`${letters.updatedAt} < now() - make_interval(secs => ${retentionMs / 1000})`

/** How many letters of an account hold personal data: `erasable` now, and `kept` (not printed yet, or in a batch not handed over). */
export async function personalDataHeld(ex: Executor, accountId: string): Promise<{ erasable: number; kept: number }> {
  const [counts] = await ex
    .select({
      erasable: sql<number>`count(*) FILTER (WHERE ${erasableNow})::int`,
      kept: sql<number>`count(*) FILTER (WHERE NOT (${erasableNow}))::int`,
    })
    .from(letters)
    .where(and(eq(letters.accountId, accountId), isNull(letters.personalDataErasedAt)))
  return counts ?? { erasable: 0, kept: 0 }
}

/** Erased letters whose files may still be in the artifact store (their removal not recorded), oldest erasure first. */
export async function lettersWithArtifacts(ex: Executor, options: { limit: number; letterIds?: readonly string[] }): Promise<string[]> {
  const rows = await ex
    .select({ id: letters.id })
    .from(letters)
    .where(
      and(
        isNotNull(letters.personalDataErasedAt),
        isNull(letters.artifactsRemovedAt),
        options.letterIds === undefined ? undefined : inArray(letters.id, [...options.letterIds]),
      ),
    )
    .orderBy(asc(letters.personalDataErasedAt))
    .limit(options.limit)
  return rows.map((row) => row.id)
}

/** Records that these erased letters' files are gone from the artifact store. */
export async function recordLetterArtifactsRemoved(ex: Executor, letterIds: readonly string[]): Promise<void> {
  if (letterIds.length === 0) return
  await ex.transaction(async (tx) => {
    const erased = await tx
      .update(letters)
      .set({ artifactsRemovedAt: sql`now()` })
      .where(and(inArray(letters.id, [...letterIds]), isNotNull(letters.personalDataErasedAt)))
      .returning({ id: letters.id })
    // Their handoff records go too: an erased letter is never printed again, so they guard
    // nothing, and kept they would grow with every letter ever printed.
    if (erased.length > 0)
      await tx.delete(printHandoffs).where(
        inArray(
          printHandoffs.letterId,
          erased.map((letter) => letter.id),
        ),
      )
  })
}

/** The `print_batches` row's letters are all erased: its files hold nobody's personal data any more. Erasure is never undone, so this stays true. */
const allLettersErased = sql<boolean>`NOT EXISTS (
  SELECT 1 FROM print_batch_letters m JOIN letters l ON l.id = m.letter_id
  WHERE m.batch_id = print_batches.id AND l.personal_data_erased_at IS NULL)`

/** A handed batch whose files have not been removed (print_batches_artifacts_pending_idx). */
const handedWithArtifacts = and(eq(printBatches.status, printBatchStatus.handed), isNull(printBatches.artifactsRemovedAt))

/**
 * The batches of these letters (just erased) whose files are still to be removed now that every
 * letter in them is erased: their cards, envelopes and manifest (every letter's name and address).
 */
export async function batchesWithArtifacts(ex: Executor, letterIds: readonly string[]): Promise<string[]> {
  if (letterIds.length === 0) return []
  const rows = await ex
    .select({ id: printBatches.id })
    .from(printBatches)
    .where(
      and(
        inArray(
          printBatches.id,
          ex
            .select({ id: printBatchLetters.batchId })
            .from(printBatchLetters)
            .where(inArray(printBatchLetters.letterId, [...letterIds])),
        ),
        handedWithArtifacts,
        allLettersErased,
      ),
    )
    .orderBy(asc(printBatches.id))
  return rows.map((row) => row.id)
}

/**
 * The next `limit` handed batches whose files have not been removed, in id order after `after`
 * (null: from the first), and those of them whose letters are all erased: batches whose removal
 * failed, or never ran (the process stopped between an erasure and its removal). Each call looks at
 * a bounded stretch; `next` is where the following one starts, null once the last was looked at,
 * so that calls in turn come round to every such batch.
 */
export async function sweepBatchesWithArtifacts(
  ex: Executor,
  options: { after: string | null; limit: number },
): Promise<{ erased: string[]; next: string | null }> {
  const rows = await ex
    .select({ id: printBatches.id, erased: allLettersErased })
    .from(printBatches)
    .where(and(handedWithArtifacts, options.after === null ? undefined : gt(printBatches.id, options.after)))
    .orderBy(asc(printBatches.id))
    .limit(options.limit)
  return {
    erased: rows.filter((row) => row.erased).map((row) => row.id),
    next: rows.length === options.limit ? rows.at(-1)!.id : null,
  }
}

/** Records that these batches' files are gone from the artifact store. */
export async function recordBatchArtifactsRemoved(ex: Executor, batchIds: readonly string[]): Promise<void> {
  if (batchIds.length === 0) return
  // Every letter of such a batch is erased (batchesWithArtifacts, sweepBatchesWithArtifacts):
  // with its files gone, nothing reads the batch again, so its rows go too rather than grow with
  // every batch ever printed.
  const ids = [...batchIds]
  await ex.transaction(async (tx) => {
    await tx.delete(printBatchHandoffs).where(inArray(printBatchHandoffs.batchId, ids))
    await tx.delete(printBatchLetters).where(inArray(printBatchLetters.batchId, ids))
    await tx.delete(printBatches).where(inArray(printBatches.id, ids))
  })
}

/**
 * A file was just written for the letter (a proof kept, a print file drawn by a run superseded
 * meanwhile): if the letter is erased, that file must go too, so its files are marked as still to
 * be removed, for the eraser's next round should the caller's own removal fail. Returns whether it is erased.
 */
export async function reopenArtifactsIfErased(ex: Executor, letterId: string): Promise<boolean> {
  const reopened = await ex
    .update(letters)
    .set({ artifactsRemovedAt: null })
    .where(and(eq(letters.id, letterId), isNotNull(letters.personalDataErasedAt)))
    .returning({ id: letters.id })
  return reopened.length > 0
}
