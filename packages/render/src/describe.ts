import { recipientBlock } from '@letters/address'
import { isFontName, type PrintSpec, type Recipient, type SignatureDrawing, type VerifiedAddress } from '@letters/contracts'
import type { DesignToRender } from './design.js'
import { describeLetter, type LetterToRender } from './letter.js'

/** What a letter's row holds that its drawing needs (packages/db, readLetterDrawings), and the artwork versions its print spec names. */
export interface LetterSource {
  letterId: string
  code: string
  fontName: string
  message: string
  senderName: string
  recipient: Recipient
  address: VerifiedAddress | null
  addressLines: string[] | null
  printSpec: PrintSpec | null
  /** By `${ownerId}@${version}`. */
  artworks: ReadonlyMap<string, { print: Uint8Array; drawing: SignatureDrawing | null }>
}

/**
 * The one place that decides what a letter's files show, from its row: the recipient block (the
 * verified address as it was laid out when verified, else the address as sent), and for a letter
 * with a print spec its designs, artwork, signature and return address. A letter accepted before
 * designs had a product (no print spec) is drawn exactly as it was then. `floorCountry`
 * (FLOOR_COUNTRY): mail that stays in it carries no country line.
 */
export function drawingOf(source: LetterSource, floorCountry: string): LetterToRender {
  if (!isFontName(source.fontName)) throw new Error(`letter ${source.letterId} uses the unknown font ${source.fontName}`)
  const recipient = source.address ?? source.recipient
  const spec = source.printSpec
  if (!spec) {
    return describeLetter({
      letterId: source.letterId,
      code: source.code,
      fontName: source.fontName,
      message: source.message,
      senderName: source.senderName,
      recipient,
      floorCountry,
    })
  }
  const artwork = (ownerId: string, version: { version: number } | null) => (version ? source.artworks.get(`${ownerId}@${version.version}`) : undefined)
  const front = artwork(spec.card.designId, spec.card.artwork)
  const logo = artwork(spec.envelope.designId, spec.envelope.artwork)
  const signature = spec.signature && artwork(spec.signature.id, spec.signature.artwork)
  const design: DesignToRender = {
    card: { format: spec.card.format, production: spec.card.production, front: spec.card.production === 'printed' ? (front?.print ?? null) : null },
    envelope: { format: spec.envelope.format, paperColor: spec.envelope.paperColor, logo: logo?.print ?? null },
    signature: signatureOf(signature ?? undefined),
    // The return address goes abroad with the letter: its country line shows when the letter leaves the sender's country.
    returnAddressLines: spec.returnAddress
      ? recipientBlock({ ...spec.returnAddress, surname: '' }, source.address?.country ?? source.recipient.country.toUpperCase())
      : null,
  }
  return {
    letterId: source.letterId,
    code: source.code,
    fontName: source.fontName,
    message: source.message,
    signature: source.senderName,
    recipientLines: source.addressLines ?? recipientBlock({ ...recipient, countryName: source.address?.countryName ?? '' }, floorCountry),
    senderLines: [source.senderName],
    design,
  }
}

function signatureOf(artwork: { print: Uint8Array; drawing: SignatureDrawing | null } | undefined): DesignToRender['signature'] {
  if (!artwork?.drawing) return null
  if (artwork.drawing.kind === 'paths') return artwork.drawing
  return { ...artwork.drawing, png: artwork.print }
}
