import { Type, type Static } from 'typebox'
import { Literals, Nullable, Page, Uuid, pageQueryFields, strict } from './common.js'

/**
 * After the mailbox: the QR code a letter may carry to its client's page (each scan counted, no
 * one's identity kept), and a letter the post brings back (its address then suppressed).
 */

export const TRACKING_URL_MAX_CHARACTERS = 2000
export const TRACKING_URL_RULE = `debe ser una URL https:// de como mucho ${TRACKING_URL_MAX_CHARACTERS} caracteres, sin usuario ni contraseña`

/**
 * Why `url` cannot be a letter's tracking URL, in Spanish, its sentence starting with `subject`
 * ("El campo 'trackingUrl'"), or undefined when it can: https only (the scanner's phone is sent
 * there), a host, no credentials (they would be printed on a card).
 */
export function trackingUrlProblem(subject: string, url: string): string | undefined {
  const refused = `${subject} ${TRACKING_URL_RULE}`
  if (url.length > TRACKING_URL_MAX_CHARACTERS || !URL.canParse(url)) return refused
  const parsed = new URL(url)
  if (parsed.protocol !== 'https:' || parsed.hostname === '' || parsed.username !== '' || parsed.password !== '') return refused
  // Written out as a person reads it: "https://" first, no backslash (which a browser reads as a slash).
  if (!/^https:\/\//i.test(url) || url.includes('\\')) return refused
  // A character URL would change (a space, a line break) or that shows nothing (a zero-width
  // space, a direction override) means the text is not the URL it looks like.
  if (/[\s\p{Cc}\p{Cf}]/u.test(url)) return refused
  return undefined
}

/** A letter's tracking URL as a request gives it: checked beyond its length by trackingUrlProblem. */
export const TrackingUrlField = Type.Optional(
  Type.Union([Type.String({ maxLength: TRACKING_URL_MAX_CHARACTERS }), Type.Null()], {
    errorMessage: `El campo 'trackingUrl' ${TRACKING_URL_RULE}`,
    description:
      'Print a QR code on the card that sends whoever scans it here (an https:// URL of at most 2,000 characters, no credentials). The code encodes our short link `/q/{code}`, which counts the scan and redirects to this URL with the link’s query parameters kept. Absent or null: no QR code.',
    examples: ['https://tienda.example.com/gracias?utm_source=carta'],
  }),
)

export const IgnoreSuppressionField = Type.Optional(
  Type.Boolean({
    errorMessage: "El campo 'ignoreSuppression' debe ser true o false",
    description:
      'true: send to an address on the account’s suppression list (a letter to it came back) anyway. Absent or false: such a letter is refused with a 400.',
  }),
)

/** The characters of a QR code's short link: letters and digits a phone's camera never mixes up in a URL. */
export const QR_CODE_ALPHABET = '23456789abcdefghjkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ'
/** Characters in a QR code's link: 12 of 55, about 69 bits, drawn at random (never derived from the letter). */
export const QR_CODE_LENGTH = 12
export const QR_CODE_PATTERN = new RegExp(`^[${QR_CODE_ALPHABET}]{${QR_CODE_LENGTH}}$`)

/** The path of the QR links: `/q/{code}`. */
export const QR_LINK_PREFIX = '/q/'
/** What a letter's QR code encodes: the service's short link for its code, which counts the scan and redirects to the client's URL. */
export const qrLink = (publicBaseUrl: string, code: string) => `${publicBaseUrl}${QR_LINK_PREFIX}${code}`

/** Scans of one code within this long make one `letter.qr_scanned` event, whose count goes up. */
export const QR_SCAN_EVENT_WINDOW_MS = 30 * 60_000
/** Counted scans of one code per minute, at most: past that a scan is redirected but not counted. */
export const QR_SCANS_COUNTED_PER_MINUTE = 10

/** What a request for a QR link was taken for: only a `counted` one is a scan. */
export const qrScanKinds = ['counted', 'prefetch', 'preview', 'limited'] as const
export type QrScanKind = (typeof qrScanKinds)[number]

/** Where a card design prints the QR code: a corner of the card's handwritten side, and the code's side in mm. */
export const qrCorners = ['top-left', 'top-right', 'bottom-left', 'bottom-right'] as const
export type QrCorner = (typeof qrCorners)[number]
export const QR_MIN_SIZE_MM = 15
export const QR_MAX_SIZE_MM = 40
/** Without a design's placement: the bottom right corner of the handwriting page, this size. */
export const DEFAULT_QR_PLACEMENT: QrPlacement = { corner: 'bottom-right', sizeMm: 18 }

export const QrPlacement = Type.Object(
  {
    corner: Literals(qrCorners, { errorMessage: `El campo 'qrPlacement.corner' debe ser uno de: ${qrCorners.join(', ')}` }),
    sizeMm: Type.Number({
      minimum: QR_MIN_SIZE_MM,
      maximum: QR_MAX_SIZE_MM,
      errorMessage: `El campo 'qrPlacement.sizeMm' debe ser un número de ${QR_MIN_SIZE_MM} a ${QR_MAX_SIZE_MM} (milímetros)`,
    }),
  },
  {
    ...strict,
    errorMessage: `El campo 'qrPlacement' debe ser { corner, sizeMm } (un rincón: ${qrCorners.join(', ')}; de ${QR_MIN_SIZE_MM} a ${QR_MAX_SIZE_MM} mm), o null`,
    description:
      'Where the QR code of a letter with a `trackingUrl` is printed on the card’s handwritten side: a corner, inside the safe margin, and the code’s side in mm. Null: bottom right, 18 mm.',
  },
)
export type QrPlacement = Static<typeof QrPlacement>

/** A letter's tracking as GET /cards/{id} shows it; null on a letter without a trackingUrl. */
export const Tracking = Type.Object({
  url: Type.String({ description: 'The client’s URL the QR code redirects to.' }),
  scans: Type.Integer({ minimum: 0, description: 'Counted scans: not link previews, prefetches, nor scans past 10 a minute.' }),
  firstScannedAt: Nullable(Type.String({ format: 'date-time' })),
  lastScannedAt: Nullable(Type.String({ format: 'date-time' })),
})
export type Tracking = Static<typeof Tracking>

/** Why the post brought a letter back, as the floor marks it. */
export const returnReasons = ['unknown_recipient', 'bad_address', 'refused', 'moved', 'deceased', 'other'] as const
export type ReturnReason = (typeof returnReasons)[number]

/** Each reason as the floor's page names it. */
export const returnReasonLabels: Record<ReturnReason, string> = {
  unknown_recipient: 'Desconocido',
  bad_address: 'Dirección incorrecta o incompleta',
  refused: 'Rehusado',
  moved: 'Se ha mudado',
  deceased: 'Fallecido',
  other: 'Otro motivo',
}

/** Each reason as a sentence about the address ends: "… fue devuelta el 2 de diciembre de 2026 como dirección incorrecta". */
export const returnReasonPhrases: Record<ReturnReason, string> = {
  unknown_recipient: 'con el destinatario desconocido',
  bad_address: 'como dirección incorrecta',
  refused: 'porque el destinatario la rehusó',
  moved: 'porque el destinatario se ha mudado',
  deceased: 'porque el destinatario ha fallecido',
  other: 'por otro motivo',
}

/** Whether a return puts the address on the account's suppression list: all but `refused`, which is about the person, not the address. */
export const suppressesAddress = (reason: ReturnReason): boolean => reason !== 'refused'

export const ReturnReasonField = Literals(returnReasons, { errorMessage: `El campo 'reason' debe ser uno de: ${returnReasons.join(', ')}` })

export const ReturnBody = Type.Object({ reason: ReturnReasonField }, strict)
export type ReturnBody = Static<typeof ReturnBody>

export const Suppression = Type.Object({
  id: Type.String({ format: 'uuid' }),
  reason: ReturnReasonField,
  createdAt: Type.String({ format: 'date-time', description: 'When the letter to this address came back.' }),
  zip: Type.String({ description: 'The postal code of the address: its street is kept only as a hash, never shown.' }),
  country: Type.String(),
})
export type Suppression = Static<typeof Suppression>
export const SuppressionList = Page(Suppression)
export const SuppressionListQuery = Type.Object(pageQueryFields, strict)
export type SuppressionListQuery = Static<typeof SuppressionListQuery>
export const SuppressionParams = Type.Object({ suppressionId: Uuid("El parámetro 'suppressionId' debe ser el id de una entrada (un UUID)") })

/** GET /campaigns/{id}/stats. */
export const CampaignStats = Type.Object({
  campaignId: Type.String({ format: 'uuid' }),
  sent: Type.Integer({
    description:
      'Letters of the campaign, of this key’s mode, paid for and on their way or delivered: all but the cancelled, rejected and failed ones (scheduled and received ones count).',
  }),
  mailed: Type.Integer({ description: 'Of those, the letters handed to the post (mailed or returned since).' }),
  returned: Type.Integer({ description: 'Of those, the letters the post brought back.' }),
  tracked: Type.Integer({ description: 'Of those, the letters with a QR code.' }),
  scanned: Type.Integer({ description: 'Of the mailed letters, those whose QR code was scanned at least once.' }),
  scans: Type.Integer({ description: 'Counted scans of all its letters.' }),
  scanRate: Type.Number({ description: 'scanned / mailed, from 0 to 1; 0 while none is mailed.' }),
})
export type CampaignStats = Static<typeof CampaignStats>
