import { and, eq, inArray, or, type SQL } from 'drizzle-orm'
import { artworkKey, type LetterDrawingSource, type PrintSpec, type SignatureDrawing } from '@letters/contracts'
import { artworks, letters, senders, type Executor } from '@letters/db'

/** One version of an artwork as the renderer draws it. */
export interface ArtworkPrint {
  print: Buffer
  drawing: SignatureDrawing | null
}

/**
 * Artwork versions never change (an upload adds a version), so what was read once serves every
 * later letter: a batch of letters of one design reads its artwork once. Bounded: the oldest read
 * goes first.
 */
const CACHE_ENTRIES = 64
const cache = new Map<string, ArtworkPrint>()

function remember(key: string, artwork: ArtworkPrint): void {
  cache.delete(key)
  cache.set(key, artwork)
  while (cache.size > CACHE_ENTRIES) cache.delete(cache.keys().next().value!)
}

/** The artwork versions a print spec names, as [ownerId, version] pairs. */
function artworksOf(spec: PrintSpec | null): Array<[string, number]> {
  if (!spec) return []
  const named: Array<[string, number]> = []
  if (spec.card.artwork) named.push([spec.card.designId, spec.card.artwork.version])
  if (spec.envelope.artwork) named.push([spec.envelope.designId, spec.envelope.artwork.version])
  if (spec.signature?.artwork) named.push([spec.signature.id, spec.signature.artwork.version])
  return named
}

/** Reads the artwork versions not in the cache, in one round trip. */
async function loadArtworks(ex: Executor, named: Array<[string, number]>): Promise<Map<string, ArtworkPrint>> {
  const found = new Map<string, ArtworkPrint>()
  const missing: SQL[] = []
  for (const [ownerId, version] of named) {
    const key = artworkKey(ownerId, version)
    const kept = cache.get(key)
    if (kept) found.set(key, kept)
    else missing.push(and(eq(artworks.ownerId, ownerId), eq(artworks.version, version))!)
  }
  if (missing.length > 0) {
    const rows = await ex
      .select({ ownerId: artworks.ownerId, version: artworks.version, print: artworks.print, drawing: artworks.drawing })
      .from(artworks)
      .where(or(...missing))
    for (const row of rows) {
      const key = artworkKey(row.ownerId, row.version)
      const artwork = { print: row.print, drawing: row.drawing }
      remember(key, artwork)
      found.set(key, artwork)
    }
  }
  for (const [ownerId, version] of named)
    if (!found.has(artworkKey(ownerId, version))) throw new Error(`artwork ${artworkKey(ownerId, version)} of a letter's print spec does not exist`)
  return found
}

/**
 * What draws each of the letters: their rows, their senders' names and the artwork versions
 * their print specs name. The one read behind every file and proof of a letter. `where` narrows
 * further (a key's account and mode, for a proof).
 */
export async function readLetterDrawings(ex: Executor, letterIds: readonly string[], where?: SQL): Promise<LetterDrawingSource[]> {
  if (letterIds.length === 0) return []
  const rows = await ex
    .select({
      letterId: letters.id,
      code: letters.code,
      fontName: letters.fontName,
      drawing: letters.drawing,
      inkColor: letters.inkColor,
      message: letters.message,
      senderName: senders.name,
      recipient: letters.recipient,
      address: letters.address,
      addressLines: letters.addressLines,
      printSpec: letters.printSpec,
    })
    .from(letters)
    .innerJoin(senders, eq(senders.id, letters.senderId))
    .where(and(inArray(letters.id, [...letterIds]), where))
  const named = new Map(rows.flatMap((row) => artworksOf(row.printSpec)).map((pair) => [artworkKey(...pair), pair]))
  const loaded = await loadArtworks(ex, [...named.values()])
  return rows.map((row) => ({
    ...row,
    artworks: new Map(artworksOf(row.printSpec).map(([ownerId, version]) => [artworkKey(ownerId, version), loaded.get(artworkKey(ownerId, version))!])),
  }))
}
