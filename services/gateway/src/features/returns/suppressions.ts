import { and, eq, inArray, sql } from 'drizzle-orm'
import { suppressedAddressOf, suppressionKey, type SuppressedAddress } from '@letters/address'
import { returnReasonPhrases, type ReturnReason, type Suppression, type SuppressionListQuery } from '@letters/contracts'
import { addressSuppressions, keysetPage, type Executor, type Recipient } from '@letters/db'
import type { LetterDraft } from '@letters/intake'
import { ApiError, badRequest, notFound } from '../../common/errors.js'
import type { KeyScope } from '../../common/caller.js'
import { decodeCursor, pageOf, positionSql, type Positioned } from '../../common/cursor.js'

/** The day a letter came back, as the refusal says it: "2 de diciembre de 2026", Madrid's calendar. */
const returnDay = new Intl.DateTimeFormat('es-ES', { day: 'numeric', month: 'long', year: 'numeric', timeZone: 'Europe/Madrid' })

/**
 * The refusal of a letter to an address on the account's list: the address, when the letter is
 * known, and the day and reason it came back.
 */
export const suppressedAddress = (recipient: Recipient | undefined, reason: ReturnReason, since: Date) =>
  badRequest(
    `La dirección ${recipient ? `${recipient.address}, ${recipient.zip} (${recipient.country}) ` : 'de una de las cartas '}fue devuelta el ${returnDay.format(since)} ${returnReasonPhrases[reason]}: ` +
      "no se le escribe de nuevo salvo que la petición lleve 'ignoreSuppression': true (o quites la dirección de la lista con DELETE /suppressions/{id})",
  )

/** The letter with the key its address is kept under in the account's list, or none when its request ignores the list. */
export function withSuppressionKey(accountId: string, draft: LetterDraft, ignore: boolean): LetterDraft {
  return { ...draft, suppressionKey: ignore ? null : suppressionKey(accountId, draft.recipient) }
}

/**
 * The letters of a bulk request, each one whose address is on the account's suppression list (of
 * the key's mode) replaced by its 400, so that the request lists it among its errors; a letter
 * without a key (its request ignores the list) is left as it is. One query for all of them.
 */
export async function refuseSuppressed(ex: Executor, scope: KeyScope, letters: ReadonlyArray<LetterDraft | ApiError>): Promise<Array<LetterDraft | ApiError>> {
  const keys = letters.map((letter) => (letter instanceof ApiError ? null : letter.suppressionKey))
  const wanted = [...new Set(keys.filter((key): key is string => key !== null))]
  if (wanted.length === 0) return [...letters]
  const rows = await ex
    .select({ key: addressSuppressions.addressHash, reason: addressSuppressions.reason, since: addressSuppressions.createdAt })
    .from(addressSuppressions)
    .where(
      and(
        eq(addressSuppressions.accountId, scope.accountId),
        eq(addressSuppressions.livemode, scope.livemode),
        inArray(addressSuppressions.addressHash, wanted),
      ),
    )
  if (rows.length === 0) return [...letters]
  const byKey = new Map(rows.map((row) => [row.key, row]))
  return letters.map((letter) => {
    const entry = letter instanceof ApiError || letter.suppressionKey === null ? undefined : byKey.get(letter.suppressionKey)
    return entry && !(letter instanceof ApiError) ? suppressedAddress(letter.recipient, entry.reason, entry.since) : letter
  })
}

/**
 * Where a returned letter went, as the list keeps it: from its recipient, or, once its personal
 * data was erased, from what the erasure kept of a letter the post had (keepReturnAddresses);
 * undefined for a letter erased before it was mailed, which the post cannot bring back.
 */
export function sentToOf(
  accountId: string,
  letter: { recipient: Pick<Recipient, 'address' | 'zip' | 'country'>; returnAddressKey: string | null; returnZip: string | null },
  erased: boolean,
): SuppressedAddress | undefined {
  if (!erased) return suppressedAddressOf(accountId, letter.recipient)
  if (letter.returnAddressKey === null || letter.returnZip === null) return undefined
  return { key: letter.returnAddressKey, zip: letter.returnZip, country: letter.recipient.country }
}

/**
 * Puts a returned letter's address on its account's list (or renews its entry: the latest return
 * is the reason shown), in the caller's transaction; the entry's id.
 *
 * No letter to the address is stored once the entry commits: the entry's foreign key holds its
 * account's row (KEY SHARE) until then, the intake locks that row (FOR UPDATE) before it checks
 * the list, and its check, a statement of its own after the lock, sees what committed. The check
 * must stay a separate statement from the lock for that to hold.
 */
export async function suppressAddress(
  ex: Executor,
  letter: { id: string; accountId: string; livemode: boolean; sentTo: SuppressedAddress },
  reason: ReturnReason,
): Promise<string> {
  const [entry] = await ex
    .insert(addressSuppressions)
    .values({
      accountId: letter.accountId,
      livemode: letter.livemode,
      addressHash: letter.sentTo.key,
      reason,
      zip: letter.sentTo.zip,
      country: letter.sentTo.country,
      letterId: letter.id,
    })
    .onConflictDoUpdate({
      target: [addressSuppressions.accountId, addressSuppressions.livemode, addressSuppressions.addressHash],
      set: { reason, letterId: letter.id, createdAt: sql`now()` },
    })
    .returning({ id: addressSuppressions.id })
  return entry!.id
}

/** The account's list (of the key's mode), newest first, a page at a time: never the street, which is kept only as its key. */
export async function listSuppressions(
  ex: Executor,
  scope: KeyScope,
  query: SuppressionListQuery,
): Promise<{ data: Suppression[]; nextCursor: string | null }> {
  const limit = query.limit ?? 20
  const keyset = keysetPage(
    { instant: addressSuppressions.createdAt, id: addressSuppressions.id },
    query.cursor ? decodeCursor(query.cursor) : undefined,
    'newest first',
    limit,
  )
  const rows = await ex
    .select({
      id: addressSuppressions.id,
      position: sql<Positioned['position']>`${positionSql(addressSuppressions.createdAt)}`,
      reason: addressSuppressions.reason,
      createdAt: addressSuppressions.createdAt,
      zip: addressSuppressions.zip,
      country: addressSuppressions.country,
    })
    .from(addressSuppressions)
    .where(and(eq(addressSuppressions.accountId, scope.accountId), eq(addressSuppressions.livemode, scope.livemode), keyset.after))
    .orderBy(keyset.orderBy)
    .limit(keyset.limit)
  const page = pageOf(rows, limit)
  return {
    data: page.rows.map(({ id, reason, createdAt, zip, country }) => ({ id, reason, createdAt: createdAt.toISOString(), zip, country })),
    nextCursor: page.nextCursor,
  }
}

export const suppressionNotFound = () => notFound('La entrada no existe en la lista de direcciones suprimidas de la cuenta')

/** Lifts an entry: letters to that address are sent again. Another account's entry is as unknown as none. */
export async function liftSuppression(ex: Executor, scope: KeyScope, id: string): Promise<void> {
  const lifted = await ex
    .delete(addressSuppressions)
    .where(and(eq(addressSuppressions.id, id), eq(addressSuppressions.accountId, scope.accountId), eq(addressSuppressions.livemode, scope.livemode)))
    .returning({ id: addressSuppressions.id })
  if (lifted.length === 0) throw suppressionNotFound()
}
