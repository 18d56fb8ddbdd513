import { and, eq, inArray, or, type SQL } from 'drizzle-orm'
import { artworkKey, ownFontKey, type LetterDrawingSource, type PrintSpec, type SignatureDrawing } from '@letters/contracts'
import { accountFontFiles, accountFonts, artworks, letters, senders, type Executor } from '@letters/db'

/** One version of an artwork as the renderer draws it. */
export interface ArtworkPrint {
  print: Buffer
  drawing: SignatureDrawing | null
}

/**
 * Artwork and font versions never change (an upload adds a version), so what was read once serves
 * every later letter: a batch of letters of one design reads its artwork once. Bounded: the oldest
 * read goes first.
 */
class VersionCache<T> {
  private readonly entries = new Map<string, T>()
  private weight = 0
  /** At most `capacity` entries, and at most `maxWeight` of `weigh` summed over them. */
  constructor(
    private readonly capacity: number,
    private readonly weigh: (value: T) => number = () => 0,
    private readonly maxWeight = Infinity,
  ) {}
  get(key: string): T | undefined {
    return this.entries.get(key)
  }
  remember(key: string, value: T): void {
    this.forget(key)
    this.entries.set(key, value)
    this.weight += this.weigh(value)
    while (this.entries.size > this.capacity || (this.weight > this.maxWeight && this.entries.size > 1)) this.forget(this.entries.keys().next().value!)
  }
  private forget(key: string): void {
    const value = this.entries.get(key)
    if (value === undefined) return
    this.weight -= this.weigh(value)
    this.entries.delete(key)
  }
}
const cache = new VersionCache<ArtworkPrint>(64)
/** A font's face is its unpacked tables, up to 32 MB: kept by what they weigh, at most 64 MB. */
const faces = new VersionCache<Buffer>(16, (face) => face.length, 64 * 1024 * 1024)

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
      cache.remember(key, artwork)
      found.set(key, artwork)
    }
  }
  for (const [ownerId, version] of named)
    if (!found.has(artworkKey(ownerId, version))) throw new Error(`artwork ${artworkKey(ownerId, version)} of a letter's print spec does not exist`)
  return found
}

/** Reads the font versions not in the cache, in one round trip. */
async function loadFaces(ex: Executor, named: Array<[string, number]>): Promise<Map<string, Buffer>> {
  const found = new Map<string, Buffer>()
  const missing: SQL[] = []
  for (const [fontId, version] of named) {
    const kept = faces.get(ownFontKey(fontId, version))
    if (kept) found.set(ownFontKey(fontId, version), kept)
    else missing.push(and(eq(accountFontFiles.fontId, fontId), eq(accountFontFiles.version, version))!)
  }
  if (missing.length > 0) {
    const rows = await ex
      .select({ fontId: accountFontFiles.fontId, version: accountFontFiles.version, face: accountFontFiles.face })
      .from(accountFontFiles)
      .where(or(...missing))
    for (const row of rows) {
      faces.remember(ownFontKey(row.fontId, row.version), row.face)
      found.set(ownFontKey(row.fontId, row.version), row.face)
    }
  }
  for (const [fontId, version] of named)
    if (!found.has(ownFontKey(fontId, version))) throw new Error(`font version ${ownFontKey(fontId, version)} of a letter does not exist`)
  return found
}

/** The font row is the letter's by the database's foreign keys: a letter without one is a fault of ours, not a default. */
function plotterFontOf(letterId: string, plotterFont: string | null): string {
  if (plotterFont === null) throw new Error(`letter ${letterId} names an account font whose row does not exist`)
  return plotterFont
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
      fontId: letters.fontId,
      fontVersion: letters.fontVersion,
      plotterFont: accountFonts.plotterFont,
    })
    .from(letters)
    .innerJoin(senders, eq(senders.id, letters.senderId))
    .leftJoin(accountFonts, eq(accountFonts.id, letters.fontId))
    .where(and(inArray(letters.id, [...letterIds]), where))
  const named = new Map(rows.flatMap((row) => artworksOf(row.printSpec)).map((pair) => [artworkKey(...pair), pair]))
  const loaded = await loadArtworks(ex, [...named.values()])
  const fonts = new Map(
    rows.flatMap(({ fontId, fontVersion }) => (fontId && fontVersion ? [[ownFontKey(fontId, fontVersion), [fontId, fontVersion] as [string, number]]] : [])),
  )
  const loadedFaces = await loadFaces(ex, [...fonts.values()])
  return rows.map(({ fontId, fontVersion, plotterFont, ...row }) => ({
    ...row,
    ownFont:
      fontId && fontVersion
        ? {
            key: ownFontKey(fontId, fontVersion),
            face: loadedFaces.get(ownFontKey(fontId, fontVersion))!,
            plotterFont: plotterFontOf(row.letterId, plotterFont),
          }
        : null,
    artworks: new Map(artworksOf(row.printSpec).map(([ownerId, version]) => [artworkKey(ownerId, version), loaded.get(artworkKey(ownerId, version))!])),
  }))
}
