import { and, eq, inArray, or, sql, type SQL } from 'drizzle-orm'
import { DRAWING_REVISION, artworkKey, ownFontKey, type LetterDrawingSource, type PrintSpec, type Recipient, type SignatureDrawing } from '@letters/contracts'
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

/**
 * The versions `named` ([owner, version] pairs) of one kind of stored file, from `kept` or, for
 * those it does not hold, read in one round trip by `read` (given the pairs, answering them with
 * their values); each by `keyOf`. A version a letter names that does not exist is our fault: thrown.
 */
async function loadVersions<T>(
  named: Array<[string, number]>,
  kept: VersionCache<T>,
  keyOf: (owner: string, version: number) => string,
  read: (missing: Array<[string, number]>) => Promise<Array<{ owner: string; version: number; value: T }>>,
  what: string,
): Promise<Map<string, T>> {
  const found = new Map<string, T>()
  const missing: Array<[string, number]> = []
  for (const [owner, version] of named) {
    const value = kept.get(keyOf(owner, version))
    if (value) found.set(keyOf(owner, version), value)
    else missing.push([owner, version])
  }
  if (missing.length > 0)
    for (const { owner, version, value } of await read(missing)) {
      kept.remember(keyOf(owner, version), value)
      found.set(keyOf(owner, version), value)
    }
  for (const [owner, version] of named) if (!found.has(keyOf(owner, version))) throw new Error(`${what} ${keyOf(owner, version)} of a letter does not exist`)
  return found
}

/** The artwork versions print specs name. */
const loadArtworks = (ex: Executor, named: Array<[string, number]>) =>
  loadVersions(
    named,
    cache,
    artworkKey,
    async (missing) =>
      (
        await ex
          .select({ owner: artworks.ownerId, version: artworks.version, print: artworks.print, drawing: artworks.drawing })
          .from(artworks)
          .where(or(...missing.map(([owner, version]) => and(eq(artworks.ownerId, owner), eq(artworks.version, version))!)))
      ).map(({ owner, version, print, drawing }) => ({ owner, version, value: { print, drawing } })),
    'artwork',
  )

/** The versions of account fonts' files letters keep. */
const loadFaces = (ex: Executor, named: Array<[string, number]>) =>
  loadVersions(
    named,
    faces,
    ownFontKey,
    (missing) =>
      ex
        .select({ owner: accountFontFiles.fontId, version: accountFontFiles.version, value: accountFontFiles.face })
        .from(accountFontFiles)
        .where(or(...missing.map(([owner, version]) => and(eq(accountFontFiles.fontId, owner), eq(accountFontFiles.version, version))!))),
    'font version',
  )

/** One version of an account font's file as the renderer parses it, read once and kept (faces). */
export async function fontFace(ex: Executor, fontId: string, version: number): Promise<Buffer> {
  return (await loadFaces(ex, [[fontId, version]])).get(ownFontKey(fontId, version))!
}

/** The font row is the letter's by the database's foreign keys: a letter without one is a fault of ours, not a default. */
function plotterFontOf(letterId: string, plotterFont: string | null): string {
  if (plotterFont === null) throw new Error(`letter ${letterId} names an account font whose row does not exist`)
  return plotterFont
}

/**
 * A letter's row as its drawing reads it, before the files it names are loaded: with its account
 * font's id and version, and the built-in hand that font stands in for on the plotter (null
 * without an account font).
 */
interface LetterDrawingRow extends Omit<LetterDrawingSource, 'ownFont' | 'artworks'> {
  fontId: string | null
  fontVersion: number | null
  plotterFont: string | null
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
      trackingCode: letters.trackingCode,
      fontId: letters.fontId,
      fontVersion: letters.fontVersion,
      plotterFont: accountFonts.plotterFont,
    })
    .from(letters)
    .innerJoin(senders, eq(senders.id, letters.senderId))
    .leftJoin(accountFonts, eq(accountFonts.id, letters.fontId))
    .where(and(inArray(letters.id, [...letterIds]), where))
  return withDrawingFiles(ex, rows)
}

/** What a letter names that its row is made of, as the intake is handed it (a LetterDraft) before it stores it. */
export interface UnstoredLetter {
  id: string
  cardDesignId: string
  envelopeDesignId: string
  senderId: string
  signatureId: string | null
  fontName: string
  fontId: string | null
  fontVersion: number | null
  inkColor: string
  message: string
  recipient: Recipient
  /** The code its QR code would link with (a preview shows the code where the letter will have it); null or absent: none. */
  trackingCode?: string | null | undefined
}

/**
 * What would draw a letter that is not stored (a preview), as readLetterDrawings would read it
 * once stored: its print spec and code made by the same database functions the intake's write
 * and the letters table use (letter_print_spec_of, letter_code), the drawing new letters get,
 * no verified address yet. Its designs, sender and signature must be checked as the account's
 * first: another account's would be drawn.
 */
export async function unstoredLetterDrawing(ex: Executor, letter: UnstoredLetter): Promise<LetterDrawingSource> {
  const [row] = await ex.execute<{ code: string; senderName: string; printSpec: PrintSpec; plotterFont: string | null }>(sql`
    SELECT letter_code(${letter.id}::uuid) AS "code", s.name AS "senderName", p.spec AS "printSpec",
      (SELECT f.plotter_font FROM account_fonts f WHERE f.id = ${letter.fontId}::uuid) AS "plotterFont"
    FROM letter_print_spec_of(${letter.cardDesignId}::uuid, ${letter.envelopeDesignId}::uuid, ${letter.senderId}::uuid, ${letter.signatureId}::uuid) p
    JOIN senders s ON s.id = ${letter.senderId}::uuid`)
  if (!row) throw new Error(`the sender ${letter.senderId} of an unstored letter does not exist`)
  const [source] = await withDrawingFiles(ex, [
    {
      letterId: letter.id,
      code: row.code,
      fontName: letter.fontName,
      drawing: DRAWING_REVISION,
      inkColor: letter.inkColor,
      message: letter.message,
      senderName: row.senderName,
      recipient: letter.recipient,
      address: null,
      addressLines: null,
      printSpec: row.printSpec,
      trackingCode: letter.trackingCode ?? null,
      fontId: letter.fontId,
      fontVersion: letter.fontVersion,
      plotterFont: row.plotterFont,
    },
  ])
  return source!
}

/** The rows with the files they name loaded: the artwork versions of their print specs and their account fonts' faces, each read once. */
async function withDrawingFiles(ex: Executor, rows: LetterDrawingRow[]): Promise<LetterDrawingSource[]> {
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
