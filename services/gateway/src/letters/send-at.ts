import { publicApi } from '@letters/contracts'
import { badRequest } from '../errors.js'

/**
 * RFC 3339's date-time: a date, a time to the minute at least, and an offset (`Z` or ±hh:mm).
 * A time without an offset would depend on the server's time zone, so it is refused.
 */
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?([Zz]|([+-])(\d{2}):(\d{2}))$/

/** The instant a `sendAt` names, or undefined when it is not a real date-time with an offset. */
export function parseDateTime(text: string): Date | undefined {
  const parts = DATE_TIME.exec(text)
  if (!parts) return undefined
  const [year, month, day, hour, minute, second = 0] = parts.slice(1, 7).map((part) => (part === undefined ? 0 : Number(part))) as number[]
  const fraction = parts[7] ? Number(parts[7]) : 0
  const offsetMinutes = parts[9] ? (parts[9] === '-' ? -1 : 1) * (Number(parts[10]) * 60 + Number(parts[11])) : 0
  if (month! < 1 || month! > 12 || hour! > 23 || minute! > 59 || second > 59 || Number(parts[10] ?? 0) > 23 || Number(parts[11] ?? 0) > 59) return undefined
  const local = Date.UTC(year!, month! - 1, day!, hour, minute, second)
  // Date.UTC rolls 31 April over to 1 May: a day the month does not have is refused.
  if (new Date(local).getUTCDate() !== day || year! < 1) return undefined
  return new Date(local + Math.floor(fraction * 1000) - offsetMinutes * 60_000)
}

/**
 * A request's `sendAt`, checked: null when absent (the letter goes at once), else an instant from
 * one minute to 180 days after now. Anything else is a 400 that names the rule.
 */
export function checkedSendAt(value: string | null | undefined, now = Date.now()): Date | null {
  if (value === undefined || value === null) return null
  const instant = parseDateTime(value)
  if (!instant) throw badRequest(`El campo ${publicApi.SEND_AT_RULE}; '${value}' no es una fecha y hora válida con zona horaria`)
  const lead = instant.getTime() - now
  if (lead < publicApi.SEND_AT_MIN_LEAD_MS) throw badRequest(`El campo ${publicApi.SEND_AT_RULE}; '${value}' está a menos de 1 minuto`)
  if (lead > publicApi.SEND_AT_MAX_LEAD_DAYS * 86_400_000) throw badRequest(`El campo ${publicApi.SEND_AT_RULE}; '${value}' está a más de ${publicApi.SEND_AT_MAX_LEAD_DAYS} días`)
  return instant
}
