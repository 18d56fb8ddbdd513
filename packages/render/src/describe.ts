import { recipientBlock } from '@letters/address'
import {
  DEFAULT_QR_PLACEMENT,
  artworkKey,
  qrLink,
  drawings,
  isFontName,
  isInkColor,
  type Drawing,
  type FontName,
  type LetterDrawingSource,
  type SignatureDrawing,
} from '@letters/contracts'
import type { DesignToRender } from './design.js'
import { describeLetter, type LetterToRender } from './letter.js'

/**
 * The one place that decides what a letter's files show, from its row: the recipient block (the
 * verified address as it was laid out when verified, else the address as sent), for a letter
 * with a print spec its designs, artwork, signature and return address, and for a letter with a
 * tracking code its QR code, linking to `publicBaseUrl` (PUBLIC_BASE_URL), in the corner its card
 * design places it in. A letter accepted before designs had a product (no print spec) is drawn
 * exactly as it was then. `floorCountry` (FLOOR_COUNTRY): mail that stays in it carries no
 * country line.
 */
export function drawingOf(source: LetterDrawingSource, floorCountry: string, publicBaseUrl?: string): LetterToRender {
  const own = source.ownFont
  if (own && !isFontName(own.plotterFont)) throw new Error(`letter ${source.letterId}'s font stands in the unknown hand ${own.plotterFont} on the plotter`)
  if (!own && !isFontName(source.fontName)) throw new Error(`letter ${source.letterId} uses the unknown font ${source.fontName}`)
  const ownFont = own ? { key: own.key, face: own.face, plotterFont: own.plotterFont as FontName } : undefined
  if (!(drawings as readonly number[]).includes(source.drawing)) throw new Error(`letter ${source.letterId} has the unknown drawing ${source.drawing}`)
  if (!isInkColor(source.inkColor)) throw new Error(`letter ${source.letterId} has the unknown ink ${source.inkColor}`)
  const hand = { drawing: source.drawing as Drawing, ink: source.inkColor, ownFont }
  const recipient = source.address ?? source.recipient
  const spec = source.printSpec
  const qr = qrOf(source, publicBaseUrl)
  if (!spec) {
    return {
      ...describeLetter({
        letterId: source.letterId,
        code: source.code,
        fontName: source.fontName,
        message: source.message,
        senderName: source.senderName,
        recipient,
        floorCountry,
      }),
      ...hand,
      ...qr,
    }
  }
  const artwork = (ownerId: string, version: { version: number } | null) => (version ? source.artworks.get(artworkKey(ownerId, version.version)) : undefined)
  const front = artwork(spec.card.designId, spec.card.artwork)
  const logo = artwork(spec.envelope.designId, spec.envelope.artwork)
  const signature = spec.signature && artwork(spec.signature.id, spec.signature.artwork)
  const design: DesignToRender = {
    card: { format: spec.card.format, production: spec.card.production, front: front?.print ?? null },
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
    ...hand,
    message: source.message,
    // The name as the sender had it when the letter was accepted: renaming a sender never alters a letter already paid for.
    signature: spec.senderName,
    recipientLines: source.addressLines ?? recipientBlock({ ...recipient, countryName: source.address?.countryName ?? '' }, floorCountry),
    senderLines: [spec.senderName],
    design,
    ...qr,
  }
}

/**
 * A letter's QR code: its short link, where its card design places it, or DEFAULT_QR_PLACEMENT.
 * None (an empty spread) without a tracking code, so that such a letter's drawing is as it was.
 */
function qrOf(source: LetterDrawingSource, publicBaseUrl: string | undefined): Pick<LetterToRender, 'qr'> {
  if (source.trackingCode === null) return {}
  // Drawn without its code, the card would go out without what the client paid for: a fault of the caller's.
  if (publicBaseUrl === undefined)
    throw new Error(`letter ${source.letterId} carries a QR code, and its drawing was not given the public base URL to link it to`)
  return { qr: { link: qrLink(publicBaseUrl, source.trackingCode), placement: source.printSpec?.card.qrPlacement ?? DEFAULT_QR_PLACEMENT } }
}

function signatureOf(artwork: { print: Uint8Array; drawing: SignatureDrawing | null } | undefined): DesignToRender['signature'] {
  if (!artwork?.drawing) return null
  if (artwork.drawing.kind === 'paths') return artwork.drawing
  return { ...artwork.drawing, png: artwork.print }
}
