import { randomInt } from 'node:crypto'
import { QR_CODE_ALPHABET, QR_CODE_LENGTH, trackingUrlProblem } from '@letters/contracts'
import { badRequest } from '../../common/errors.js'

/** A QR link's code: random characters, drawn from the OS's generator, unrelated to the letter. */
export function newTrackingCode(): string {
  let code = ''
  for (let i = 0; i < QR_CODE_LENGTH; i++) code += QR_CODE_ALPHABET[randomInt(QR_CODE_ALPHABET.length)]
  return code
}

/**
 * A letter's tracking: its URL, checked (a 400 whose sentence starts with `subject` otherwise),
 * and a new code for its short link; both null without a URL.
 */
export function letterTracking(
  url: string | null | undefined,
  subject = "El campo 'trackingUrl'",
): { trackingUrl: string | null; trackingCode: string | null } {
  if (url == null) return { trackingUrl: null, trackingCode: null }
  const problem = trackingUrlProblem(subject, url)
  if (problem) throw badRequest(problem)
  // Kept as the URL standard writes it (an accented host in punycode, say): what is shown is where scans go.
  return { trackingUrl: new URL(url).href, trackingCode: newTrackingCode() }
}
