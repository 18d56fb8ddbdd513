import { and, eq } from 'drizzle-orm'
import { isFontName } from '@letters/contracts'
import { letters, senders, type Db } from '@letters/db'
import { describeLetter, renderProof, type LetterRecord } from '@letters/render'
import { assertCardId, cardNotFound } from './cards.js'

/**
 * The proof of one of the account's letters: card and envelope drawn exactly as the floor prints
 * them. Before its address is verified, the envelope shows the address as it was sent.
 */
export async function cardProof(db: Db, accountId: string, cardId: string): Promise<Buffer> {
  assertCardId(cardId)
  const [row] = await db
    .select({ fontName: letters.fontName, message: letters.message, recipient: letters.recipient, address: letters.address, sender: senders.name })
    .from(letters)
    .innerJoin(senders, eq(senders.id, letters.senderId))
    .where(and(eq(letters.id, cardId), eq(letters.accountId, accountId)))
  if (!row) throw cardNotFound()
  // Checked when the letter was created; a font later removed from the catalogue is a bug of ours.
  if (!isFontName(row.fontName)) throw new Error(`letter ${cardId} uses the unknown font ${row.fontName}`)
  const recipient = (row.address as LetterRecord['recipient'] | null) ?? row.recipient
  return renderProof(describeLetter({ letterId: cardId, fontName: row.fontName, message: row.message, senderName: row.sender, recipient }))
}
