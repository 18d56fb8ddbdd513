import { and, eq } from 'drizzle-orm'
import { normalizeAddress } from '@letters/address'
import { fontNames, type FontName, type Sender, type StoredReturnAddress, admin } from '@letters/contracts'
import { senders, type Db, type Executor } from '@letters/db'
import { badRequest } from '../../common/errors.js'
import { intoAccount, notFoundInAccount } from '../accounts/index.js'
import { assertWritable, type LetterHand } from '../designs/index.js'

/**
 * A return address, checked and normalized by the rules of a recipient's address (the address
 * worker's): one the post could not deliver is a 400 naming its problems.
 */
export function normalizedReturnAddress(body: admin.ReturnAddressBody): StoredReturnAddress {
  const result = normalizeAddress({
    name: body.name,
    surname: '',
    company: body.company ?? null,
    address: body.address,
    zip: body.zip,
    city: body.city,
    province: body.province ?? null,
    country: body.country,
  })
  if (result.deliverability === 'undeliverable') throw badRequest(`La dirección de remite no es válida: ${result.problems.join('; ')}`)
  const { name, company, address, zip, city, province, country, countryName } = result
  return { name, company, address, zip, city, province, country, countryName }
}

const senderColumns = { id: senders.id, name: senders.name, returnAddress: senders.returnAddress }

/**
 * A sender's name signs its letters and its return address is written on their envelopes, in
 * whatever font each letter is written in: every font must be able to write both.
 */
function assertWritableSender(
  name: string | undefined,
  returnAddress: StoredReturnAddress | null | undefined,
  hands: ReadonlyArray<LetterHand | FontName> = fontNames,
  subjectOf = (field: string) => `El campo '${field}'`,
): void {
  const texts: Array<[string, string | null | undefined]> = [[subjectOf('name'), name]]
  if (returnAddress)
    for (const field of ['name', 'company', 'address', 'zip', 'city', 'province', 'countryName'] as const)
      texts.push([subjectOf(`returnAddress.${field}`), returnAddress[field]])
  for (const hand of hands) for (const [subject, text] of texts) assertWritable(hand, subject, text)
}

/**
 * A letter in an account's own font writes its sender's name and return address in that font,
 * which a sender was never checked against (the built-in hands were): a 400 naming what it
 * cannot write, before anything is charged. A built-in hand costs no query.
 */
export async function assertSenderWritableIn(ex: Executor, accountId: string, senderId: string, hand: LetterHand): Promise<void> {
  if (typeof hand.hand === 'string') return
  const [sender] = await ex
    .select({ name: senders.name, returnAddress: senders.returnAddress })
    .from(senders)
    .where(and(eq(senders.id, senderId), eq(senders.accountId, accountId)))
  // Another account's sender or none: the intake refuses it, naming the field.
  if (sender) assertWritableSender(sender.name, sender.returnAddress, [hand], (field) => `El remitente (su campo '${field}')`)
}

export async function createSender(db: Executor, accountId: string, body: admin.CreateSenderBody): Promise<Sender> {
  const returnAddress = body.returnAddress ? normalizedReturnAddress(body.returnAddress) : null
  assertWritableSender(body.name, returnAddress)
  const [row] = await intoAccount(() => db.insert(senders).values({ accountId, name: body.name, returnAddress }).returning(senderColumns))
  return row!
}

export async function updateSender(db: Db, accountId: string, senderId: string, patch: admin.UpdateSenderBody): Promise<Sender> {
  const set: Partial<typeof senders.$inferInsert> = {}
  if (patch.name !== undefined) set.name = patch.name
  if (patch.returnAddress !== undefined) set.returnAddress = patch.returnAddress && normalizedReturnAddress(patch.returnAddress)
  assertWritableSender(set.name, set.returnAddress)
  const [row] = await db
    .update(senders)
    .set(set)
    .where(and(eq(senders.id, senderId), eq(senders.accountId, accountId)))
    .returning(senderColumns)
  if (!row) throw await notFoundInAccount(db, accountId, 'El remitente no existe')
  return row
}
