import { Type, type Static } from 'typebox'
import { strict } from './common.js'
import { ReturnReasonField } from './tracking.js'

/**
 * POST /floor/scan: the code a scanner (or a person) typed. Loose on purpose: spaces, dashes
 * and lower case are tidied by the scan itself (normalizeScannedCode); a code that is still not
 * one of ours after that is a 404, not a 400.
 */
export const ScanBody = Type.Object({ code: Type.String({ minLength: 1, maxLength: 64 }) }, strict)
export type ScanBody = Static<typeof ScanBody>

/** A returned envelope's code, as the scan page's "Devuelta" mode sends it, with the reason the floor picked. */
export const ReturnScanBody = Type.Object({ code: ScanBody.properties.code, reason: ReturnReasonField }, strict)
export type ReturnScanBody = Static<typeof ReturnScanBody>

/** Plain strings: an id that is not a batch's and a kind that is not a file's are both a 404, as any unknown path. */
export const BatchFileParams = Type.Object({ id: Type.String(), kind: Type.String() })
export type BatchFileParams = Static<typeof BatchFileParams>

/** A batch file: its bytes (a PDF or the manifest's CSV). */
export const BatchFile = Type.Unsafe<Buffer>({ type: 'string', format: 'binary' })

/** The floor's page: HTML. */
export const FloorPage = Type.String({ contentMediaType: 'text/html' })

/** The page's script (/floor/scan.js). */
export const FloorScript = Type.String({ contentMediaType: 'text/javascript' })
