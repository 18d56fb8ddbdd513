import { and, eq } from 'drizzle-orm'
import type { Signature } from '@letters/contracts'
import { signatures, type Executor } from '@letters/db'
import { intoAccount } from '../accounts/index.js'
import { latestArtwork } from '../designs/index.js'

export async function createSignature(db: Executor, accountId: string, name: string): Promise<Signature> {
  const [row] = await intoAccount(() => db.insert(signatures).values({ accountId, name }).returning({ id: signatures.id, name: signatures.name }))
  return { ...row!, artwork: null }
}

/** One of the account's signatures, with its latest drawing's file (null when it has none). */
export async function findSignature(ex: Executor, accountId: string, signatureId: string): Promise<Signature | undefined> {
  const [row] = await ex
    .select({ id: signatures.id, name: signatures.name })
    .from(signatures)
    .where(and(eq(signatures.id, signatureId), eq(signatures.accountId, accountId)))
  return row && { ...row, artwork: await latestArtwork(ex, signatureId, null) }
}
