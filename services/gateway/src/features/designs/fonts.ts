import { and, asc, eq, max, sql } from 'drizzle-orm'
import { FontReaderUnavailableError, fontPreview, inspectFont } from '@letters/artwork'
import {
  DEFAULT_FONT,
  fontFamilies,
  fontNames,
  isFontName,
  ownFontKey,
  type AccountFont,
  type CreateAccountFontBody,
  type FontName,
  type publicApi,
} from '@letters/contracts'
import { accountFontFiles, accountFonts, SQLSTATE, sqlState, type Executor } from '@letters/db'
import { handFont, unwritableCharacters, type HandChoice } from '@letters/render'
import type { OrderDeadline } from '@letters/intake'
import { givenUpAtDeadline, writeByDeadline } from '../../common/deadline-writes.js'
import { ApiError, Unavailable, badRequest, conflict, notFound } from '../../common/errors.js'
import { fontFace } from '@letters/letters'
import { findAccount, accountNotFound, intoAccount } from '../accounts/index.js'

/**
 * The hand a letter is written in, as a creation request names it: a built-in one, or one of the
 * account's own fonts in the latest version of its file (which the letter keeps).
 */
export interface LetterHand {
  fontName: string
  hand: HandChoice
  fontId: string | null
  fontVersion: number | null
}

/** The latest version of each account font's file: the one new letters are written in. */
const latestFile = sql`(SELECT max(${accountFontFiles.version}) FROM ${accountFontFiles} WHERE ${accountFontFiles.fontId} = ${accountFonts.id})`

/** Most of the account's own fonts a refusal names: the rest are GET /fonts's to list. */
const NAMED_OWN_FONTS = 20

/** The account's own fonts a letter can be written in (those with a file), by name; at most `limit`. */
function usableOwnFonts(ex: Executor, accountId: string, limit?: number) {
  const query = ex
    .select({ name: accountFonts.name, family: accountFonts.family })
    .from(accountFonts)
    .where(and(eq(accountFonts.accountId, accountId), sql`${latestFile} IS NOT NULL`))
    .orderBy(asc(accountFonts.name))
  return limit === undefined ? query : query.limit(limit)
}

/** The names a request may send as `fontName`, for a refusal: the built-in hands, then the account's own with a file. */
async function availableNames(ex: Executor, accountId: string): Promise<string> {
  const own = await usableOwnFonts(ex, accountId, NAMED_OWN_FONTS + 1)
  const named = [...fontNames, ...own.slice(0, NAMED_OWN_FONTS).map((row) => row.name)].join(', ')
  return own.length > NAMED_OWN_FONTS ? `${named} y otras (GET /fonts las lista todas)` : named
}

/**
 * The hand a letter of `accountId` is written in: the default when none is asked for; 400 for a
 * name that is neither a built-in hand nor one of the account's fonts (another account's font
 * included), and for an account font without a file yet. A built-in hand costs no query.
 */
export async function letterHand(ex: Executor, accountId: string, fontName: string | null | undefined): Promise<LetterHand> {
  if (fontName === null || fontName === undefined) return { fontName: DEFAULT_FONT, hand: DEFAULT_FONT, fontId: null, fontVersion: null }
  if (isFontName(fontName)) return { fontName, hand: fontName, fontId: null, fontVersion: null }
  const [row] = await ex
    .select({ id: accountFonts.id, plotterFont: accountFonts.plotterFont, version: latestFile.mapWith(Number) })
    .from(accountFonts)
    .where(and(eq(accountFonts.accountId, accountId), eq(accountFonts.name, fontName)))
  if (!row) throw badRequest(`La fuente '${fontName}' no existe; las disponibles son: ${await availableNames(ex, accountId)}`)
  if (!row.version) throw badRequest(`La fuente '${fontName}' aún no tiene archivo: no puede usarse hasta que se suba`)
  const face = await fontFace(ex, row.id, row.version)
  return { fontName, hand: { key: ownFontKey(row.id, row.version), face, plotterFont: row.plotterFont }, fontId: row.id, fontVersion: row.version }
}

/** The catalogue of hands: the built-in ones, the default first, then the account's own that can be used (those with a file). */
export async function listFonts(ex: Executor, accountId: string): Promise<publicApi.FontList> {
  const ordered = [DEFAULT_FONT, ...fontNames.filter((name) => name !== DEFAULT_FONT)]
  const own = await usableOwnFonts(ex, accountId)
  return {
    data: [
      ...ordered.map((name) => ({ name, family: fontFamilies[name], default: name === DEFAULT_FONT, own: false })),
      ...own.map((font) => ({ ...font, default: false, own: true })),
    ],
  }
}

/** The built-in hands' previews, made on first request: the same fonts give the same PNG. */
const builtInPreviews = new Map<FontName, Promise<Buffer>>()

/**
 * The PNG of a sample sentence in a hand the account can use (at most 1,000 px wide); undefined
 * for a name that is not one (another account's font included) or a font without a file.
 */
export async function fontPreviewPng(ex: Executor, accountId: string, name: string): Promise<Buffer | undefined> {
  if (isFontName(name)) {
    const kept = builtInPreviews.get(name)
    if (kept) return kept
    const made = fontPreview(handFont(name))
    builtInPreviews.set(name, made)
    made.catch(() => builtInPreviews.delete(name))
    return made
  }
  const [row] = await ex
    .select({ preview: accountFontFiles.preview })
    .from(accountFonts)
    .innerJoin(accountFontFiles, and(eq(accountFontFiles.fontId, accountFonts.id), eq(accountFontFiles.version, latestFile)))
    .where(and(eq(accountFonts.accountId, accountId), eq(accountFonts.name, name)))
  return row?.preview
}

const fontNotFound = (name: string) => notFound(`La cuenta no tiene ninguna fuente llamada '${name}'`)

const accountFontColumns = { id: accountFonts.id, name: accountFonts.name, family: accountFonts.family, plotterFont: accountFonts.plotterFont }

/** A font file's version as the admin API shows it. */
const fileColumns = {
  contentType: accountFontFiles.contentType,
  bytes: accountFontFiles.bytes,
  sha256: accountFontFiles.sha256,
  version: accountFontFiles.version,
}

/** POST /admin/accounts/{id}/fonts: a font with no file yet. Its name is unique in the account and never a built-in hand's (409, 400). */
export async function createAccountFont(ex: Executor, accountId: string, body: CreateAccountFontBody): Promise<AccountFont> {
  if (isFontName(body.name)) throw badRequest(`El nombre '${body.name}' es el de una letra incluida; elige otro para la fuente de la cuenta`)
  try {
    const [row] = await intoAccount(() =>
      ex
        .insert(accountFonts)
        .values({ accountId, name: body.name, family: body.family, plotterFont: body.plotterFont ?? DEFAULT_FONT })
        .returning(accountFontColumns),
    )
    return { name: row!.name, family: row!.family, plotterFont: row!.plotterFont, file: null }
  } catch (error) {
    if (sqlState(error) === SQLSTATE.uniqueViolation) throw conflict(`La cuenta ya tiene una fuente llamada '${body.name}'`)
    throw error
  }
}

/** GET /admin/accounts/{id}/fonts: every font of the account, by name, with or without a file. */
export async function listAccountFonts(ex: Executor, accountId: string): Promise<AccountFont[]> {
  if (!(await findAccount(ex, accountId))) throw accountNotFound()
  // Each font with the latest version of its file (null: none yet), in one query.
  const rows = await ex
    .select({ name: accountFonts.name, family: accountFonts.family, plotterFont: accountFonts.plotterFont, file: fileColumns })
    .from(accountFonts)
    .leftJoin(accountFontFiles, and(eq(accountFontFiles.fontId, accountFonts.id), eq(accountFontFiles.version, latestFile)))
    .where(eq(accountFonts.accountId, accountId))
    .orderBy(asc(accountFonts.name))
  return rows
}

/** An upload the font reader could not read for a fault of ours (it did not start): nothing was stored. */
const fontReaderUnavailableMessage =
  'No hemos podido leer la fuente ahora mismo: nuestro lector de fuentes no arrancó. No se ha guardado nada; repite la subida en unos segundos'

/**
 * PUT …/fonts/{name}/file: a new version of the font's file, checked first (@letters/artwork's
 * inspectFont, in a child process with time and memory limits): nothing is stored when it is
 * refused. The font's row is locked while the version is numbered, so two uploads at once get two
 * versions.
 */
export async function putAccountFontFile(
  ex: Executor,
  accountId: string,
  name: string,
  upload: { contentType: string; data: Buffer },
  deadline?: OrderDeadline,
): Promise<AccountFont> {
  const [font] = await ex
    .select(accountFontColumns)
    .from(accountFonts)
    .where(and(eq(accountFonts.accountId, accountId), eq(accountFonts.name, name)))
  if (!font) throw (await findAccount(ex, accountId)) ? fontNotFound(name) : accountNotFound()
  const inspected = await inspectFont({ contentType: upload.contentType, data: upload.data }, deadline?.signal).catch((error: unknown) => {
    if (error instanceof FontReaderUnavailableError) throw new Unavailable(fontReaderUnavailableMessage, undefined, error)
    // Its request was given up on (answered 503, or gone), which stopped the read: told as the deadline tells it.
    if (deadline?.abandoned) throw givenUpAtDeadline()
    throw error
  })
  if ('refused' in inspected) throw new ApiError(inspected.status, inspected.message)
  const stored = await writeByDeadline(ex, deadline, async (tx, begin) => {
    await tx.select({ id: accountFonts.id }).from(accountFonts).where(eq(accountFonts.id, font.id)).for('update')
    begin()
    const [latest] = await tx
      .select({ version: max(accountFontFiles.version) })
      .from(accountFontFiles)
      .where(eq(accountFontFiles.fontId, font.id))
    const [row] = await tx
      .insert(accountFontFiles)
      .values({
        fontId: font.id,
        version: (latest?.version ?? 0) + 1,
        contentType: inspected.contentType,
        bytes: inspected.bytes,
        sha256: inspected.sha256,
        original: upload.data,
        face: inspected.face,
        preview: inspected.preview,
      })
      .returning(fileColumns)
    return row!
  })
  // The version this upload stored, even if another was stored since.
  return { name: font.name, family: font.family, plotterFont: font.plotterFont, file: stored }
}

/** Most characters named in a refusal: enough to find them, never a wall of text. */
const NAMED_CHARACTERS = 10

/**
 * The explicit direction controls (embeddings, overrides, isolates): the floor writes text in the
 * order it was typed, and a control would make what the client sees on screen differ from what
 * is printed (a name "reversed" by U+202E).
 */
const BIDI_CONTROL = /[\u202A-\u202E\u2066-\u2069]/u

/**
 * Refuses (400) text the hand has no glyph for: drawn, each such character (Chinese, an emoji, a
 * Ł in a latin font) would come out as an empty box on a letter someone paid for; and text with
 * a direction control. `subject` names the field in the Spanish message, e.g. "El campo 'name'".
 */
export function assertWritable(hand: LetterHand | FontName, subject: string, text: string | null | undefined): void {
  const control = text ? BIDI_CONTROL.exec(text)?.[0] : undefined
  if (control) {
    const code = `U+${control.codePointAt(0)!.toString(16).toUpperCase()}`
    throw badRequest(`${subject} contiene un carácter de control de dirección del texto (${code}), que haría imprimirlo en otro orden; quítalo`)
  }
  const [choice, fontName] = typeof hand === 'string' ? [hand, hand] : [hand.hand, hand.fontName]
  const missing = text ? unwritableCharacters(choice, text) : []
  if (missing.length > 0)
    throw badRequest(`${subject} contiene caracteres que la letra '${fontName}' no puede escribir: ${missing.slice(0, NAMED_CHARACTERS).join(' ')}`)
}
