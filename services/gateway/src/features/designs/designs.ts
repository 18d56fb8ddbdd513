import { and, desc, eq, max, sql, type SQLWrapper } from 'drizzle-orm'
import { blankPreview, inspectArtwork, type InspectInput } from '@letters/artwork'
import {
  DEFAULT_CARD_FORMAT,
  DEFAULT_CARD_PRODUCTION,
  DEFAULT_ENVELOPE_FORMAT,
  cardFormats,
  envelopeFormats,
  type ArtworkMeta,
  type ArtworkUse,
  type CardDesign,
  type EnvelopeDesign,
  admin,
} from '@letters/contracts'
import { artworks, cardDesigns, envelopeDesigns, signatures, type Db, type Executor } from '@letters/db'
import type { OrderDeadline } from '@letters/intake'
import { writeByDeadline } from '../../common/deadline-writes.js'
import { ApiError, badRequest, notFound } from '../../common/errors.js'
import { intoAccount, notFoundInAccount } from '../accounts/index.js'

/** What an artwork belongs to, by the path segment that names it. */
export const artworkOwners = {
  'card-designs': { table: cardDesigns, use: 'card-front', missing: 'El diseño de tarjeta no existe' },
  'envelope-designs': { table: envelopeDesigns, use: 'envelope-logo', missing: 'El diseño de sobre no existe' },
  signatures: { table: signatures, use: 'signature', missing: 'La firma no existe' },
} as const satisfies Record<string, { table: typeof cardDesigns | typeof envelopeDesigns | typeof signatures; use: ArtworkUse; missing: string }>
export type ArtworkOwner = keyof typeof artworkOwners

const artworkMetaColumns = {
  contentType: artworks.contentType,
  bytes: artworks.bytes,
  sha256: artworks.sha256,
  version: artworks.version,
}

/**
 * The latest artwork of an owner made for its current format (null for a signature), as the API
 * shows it; null when none was. A design whose format changed shows none until artwork of the
 * new format is uploaded, and its letters are printed without (letter_print_spec matches too).
 */
export async function latestArtwork(ex: Executor, ownerId: string, format: string | null): Promise<ArtworkMeta | null> {
  const [row] = await ex
    .select(artworkMetaColumns)
    .from(artworks)
    .where(and(eq(artworks.ownerId, ownerId), sameFormat(format)))
    .orderBy(desc(artworks.version))
    .limit(1)
  return row ?? null
}

const sameFormat = (format: SQLWrapper | string | null) => sql`${artworks.format} IS NOT DISTINCT FROM ${format}`

type CardDesignRow = Pick<typeof cardDesigns.$inferSelect, 'id' | 'name' | 'format' | 'production' | 'stockCode' | 'qrPlacement'>
type EnvelopeDesignRow = Pick<typeof envelopeDesigns.$inferSelect, 'id' | 'name' | 'format' | 'stockCode' | 'paperColor'>

const cardDesignView = (row: CardDesignRow, artwork: ArtworkMeta | null): CardDesign => ({
  id: row.id,
  name: row.name,
  format: row.format,
  size: { ...cardFormats[row.format] },
  production: row.production,
  stockCode: row.stockCode,
  artwork,
  qrPlacement: row.qrPlacement,
})

const envelopeDesignView = (row: EnvelopeDesignRow, artwork: ArtworkMeta | null): EnvelopeDesign => ({
  id: row.id,
  name: row.name,
  format: row.format,
  size: { ...envelopeFormats[row.format] },
  stockCode: row.stockCode,
  paperColor: row.paperColor,
  artwork,
})

const cardDesignColumns = {
  id: cardDesigns.id,
  name: cardDesigns.name,
  format: cardDesigns.format,
  production: cardDesigns.production,
  stockCode: cardDesigns.stockCode,
  qrPlacement: cardDesigns.qrPlacement,
}
const envelopeDesignColumns = {
  id: envelopeDesigns.id,
  name: envelopeDesigns.name,
  format: envelopeDesigns.format,
  stockCode: envelopeDesigns.stockCode,
  paperColor: envelopeDesigns.paperColor,
}

/** A preprinted card is stock the floor loads: without its code the floor could not tell which. */
function assertCoherentCard(design: Pick<CardDesignRow, 'production' | 'stockCode'>): void {
  if (design.production === 'preprinted' && !design.stockCode)
    throw badRequest("Un diseño 'preprinted' necesita 'stockCode': el código del papel preimpreso que carga el taller")
}

export async function createCardDesign(db: Executor, accountId: string, body: admin.CreateCardDesignBody): Promise<CardDesign> {
  const values = {
    accountId,
    name: body.name,
    format: body.format ?? DEFAULT_CARD_FORMAT,
    production: body.production ?? DEFAULT_CARD_PRODUCTION,
    stockCode: body.stockCode ?? null,
    qrPlacement: body.qrPlacement ?? null,
  }
  assertCoherentCard(values)
  const [row] = await intoAccount(() => db.insert(cardDesigns).values(values).returning(cardDesignColumns))
  return cardDesignView(row!, null)
}

export async function createEnvelopeDesign(db: Executor, accountId: string, body: admin.CreateEnvelopeDesignBody): Promise<EnvelopeDesign> {
  const values = {
    accountId,
    name: body.name,
    format: body.format ?? DEFAULT_ENVELOPE_FORMAT,
    stockCode: body.stockCode ?? null,
    paperColor: body.paperColor?.toUpperCase() ?? null,
  }
  const [row] = await intoAccount(() => db.insert(envelopeDesigns).values(values).returning(envelopeDesignColumns))
  return envelopeDesignView(row!, null)
}

/** Changes a card design's fields. Letters already accepted keep what they were accepted with (their print spec). */
export async function updateCardDesign(db: Db, accountId: string, designId: string, patch: admin.UpdateCardDesignBody): Promise<CardDesign> {
  const updated = await db.transaction(async (tx) => {
    const [current] = await tx
      .select(cardDesignColumns)
      .from(cardDesigns)
      .where(and(eq(cardDesigns.id, designId), eq(cardDesigns.accountId, accountId)))
      .for('update')
    if (!current) return undefined
    const next = { ...current, ...definedFields(patch) }
    assertCoherentCard(next)
    const [row] = await tx
      .update(cardDesigns)
      .set({ name: next.name, format: next.format, production: next.production, stockCode: next.stockCode, qrPlacement: next.qrPlacement })
      .where(eq(cardDesigns.id, designId))
      .returning(cardDesignColumns)
    return row
  })
  if (!updated) throw await notFoundInAccount(db, accountId, artworkOwners['card-designs'].missing)
  return cardDesignView(updated, await latestArtwork(db, designId, updated.format))
}

export async function updateEnvelopeDesign(db: Db, accountId: string, designId: string, patch: admin.UpdateEnvelopeDesignBody): Promise<EnvelopeDesign> {
  const fields = definedFields(patch)
  if (typeof fields.paperColor === 'string') fields.paperColor = fields.paperColor.toUpperCase()
  const [row] = await db
    .update(envelopeDesigns)
    .set(fields)
    .where(and(eq(envelopeDesigns.id, designId), eq(envelopeDesigns.accountId, accountId)))
    .returning(envelopeDesignColumns)
  if (!row) throw await notFoundInAccount(db, accountId, artworkOwners['envelope-designs'].missing)
  return envelopeDesignView(row, await latestArtwork(db, designId, row.format))
}

/** The fields a PATCH body sets: absent ones are left as they are, null ones cleared. */
function definedFields<T extends object>(patch: T): Partial<T> {
  return Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined)) as Partial<T>
}

/** One of the account's card designs, as GET /card-designs/{id} shows it; undefined when it is not the account's. */
export async function findCardDesign(ex: Executor, accountId: string, designId: string): Promise<CardDesign | undefined> {
  const [row] = await ex
    .select(cardDesignColumns)
    .from(cardDesigns)
    .where(and(eq(cardDesigns.id, designId), eq(cardDesigns.accountId, accountId)))
  return row && cardDesignView(row, await latestArtwork(ex, designId, row.format))
}

export async function findEnvelopeDesign(ex: Executor, accountId: string, designId: string): Promise<EnvelopeDesign | undefined> {
  const [row] = await ex
    .select(envelopeDesignColumns)
    .from(envelopeDesigns)
    .where(and(eq(envelopeDesigns.id, designId), eq(envelopeDesigns.accountId, accountId)))
  return row && envelopeDesignView(row, await latestArtwork(ex, designId, row.format))
}

/**
 * The PNG a client shows its users when they pick a card design (at most 1,000 px wide): the
 * front of its latest artwork, or a blank card of its size.
 */
export async function cardDesignPreview(ex: Executor, accountId: string, designId: string): Promise<Buffer | undefined> {
  const [row] = await ex
    .select({ format: cardDesigns.format, preview: artworks.preview })
    .from(cardDesigns)
    .leftJoin(artworks, and(eq(artworks.ownerId, cardDesigns.id), sameFormat(cardDesigns.format)))
    .where(and(eq(cardDesigns.id, designId), eq(cardDesigns.accountId, accountId)))
    .orderBy(sql`${artworks.version} DESC NULLS LAST`)
    .limit(1)
  if (!row) return undefined
  return row.preview ?? blankPreview(cardFormats[row.format])
}

/**
 * The PNG of an envelope design's logo or a signature's drawing, as the latest version that
 * prints (an envelope's made for its format); undefined for another account's, or for one
 * without any.
 */
export async function artworkPreview(ex: Executor, accountId: string, owner: 'envelope-designs' | 'signatures', id: string): Promise<Buffer | undefined> {
  const format =
    owner === 'envelope-designs'
      ? sql`(SELECT ${envelopeDesigns.format} FROM ${envelopeDesigns} WHERE ${envelopeDesigns.id} = ${id} AND ${envelopeDesigns.accountId} = ${accountId})`
      : null
  const [row] = await ex
    .select({ preview: artworks.preview })
    .from(artworks)
    .where(and(eq(artworks.ownerId, id), eq(artworks.accountId, accountId), eq(artworks.use, artworkOwners[owner].use), sameFormat(format)))
    .orderBy(desc(artworks.version))
    .limit(1)
  return row?.preview
}

/**
 * Stores a new version of an owner's artwork, checked and made ready to print first (nothing is
 * stored when the file is refused). The owner's row is locked while the version is numbered, so
 * two uploads at once get two versions. The version is stored with the format it was checked
 * against: a format changed meanwhile leaves it to that format, never to print on another.
 */
export async function putArtwork<View extends object>(
  db: Executor,
  owner: ArtworkOwner,
  ids: { accountId: string; ownerId: string },
  upload: { contentType: string; data: Buffer },
  /** The owner as its feature shows it (a card design, a signature), read once the version is stored. */
  view: (ex: Executor, accountId: string, ownerId: string) => Promise<View | undefined>,
  deadline?: OrderDeadline,
): Promise<View & { artwork: ArtworkMeta }> {
  const { accountId, ownerId } = ids
  const { table, use, missing } = artworkOwners[owner]
  const format = await formatOf(db, owner, accountId, ownerId)
  if (format === undefined) throw await notFoundInAccount(db, accountId, missing)
  // Each owner's use goes with its kind of format (formatOf): the pair is one of InspectInput's.
  const inspected = await inspectArtwork({ use, format, contentType: upload.contentType, data: upload.data } as InspectInput)
  if ('refused' in inspected) throw new ApiError(inspected.status, inspected.message)
  return writeByDeadline(db, deadline, async (tx, begin) => {
    const [locked] = await tx
      .select({ id: table.id })
      .from(table)
      .where(and(eq(table.id, ownerId), eq(table.accountId, accountId)))
      .for('update')
    if (!locked) throw notFound(missing)
    begin()
    const [latest] = await tx
      .select({ version: max(artworks.version) })
      .from(artworks)
      .where(eq(artworks.ownerId, ownerId))
    const [row] = await tx
      .insert(artworks)
      .values({
        ownerId,
        version: (latest?.version ?? 0) + 1,
        accountId,
        use,
        format,
        contentType: inspected.contentType,
        bytes: inspected.bytes,
        sha256: inspected.sha256,
        original: upload.data,
        print: inspected.print,
        preview: inspected.preview,
        drawing: inspected.signature,
      })
      .returning(artworkMetaColumns)
    // Read before the commit, so that nothing after it can fail and have a stored version
    // answered as an error.
    return { ...(await view(tx, accountId, ownerId))!, artwork: row! }
  })
}

/** The format an artwork is checked against (null for a signature); undefined when the owner is not the account's. */
async function formatOf(ex: Executor, owner: ArtworkOwner, accountId: string, ownerId: string) {
  if (owner === 'signatures') {
    const [row] = await ex
      .select({ id: signatures.id })
      .from(signatures)
      .where(and(eq(signatures.id, ownerId), eq(signatures.accountId, accountId)))
    return row ? null : undefined
  }
  const table = owner === 'card-designs' ? cardDesigns : envelopeDesigns
  const [row] = await ex
    .select({ format: table.format })
    .from(table)
    .where(and(eq(table.id, ownerId), eq(table.accountId, accountId)))
  return row?.format
}
