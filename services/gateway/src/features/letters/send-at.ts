import { publicApi } from '@letters/contracts'
import { badRequest } from '../../common/errors.js'

/**
 * RFC 3339's date-time: a date, a time to the minute at least, and an offset (`Z` or ±hh:mm).
 * A time without an offset would depend on the server's time zone, so it is refused.
 */
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?([Zz]|([+-])(\d{2}):(\d{2}))$/

/** The instant a `sendAt` names, or undefined when it is not a real date-time with an offset. */
export function parseDateTime(text: string): Date | undefined {
  const parts = DATE_TIME.exec(text)
  if (!parts) return undefined
  const [year, month, day, hour, minute, second = 0] = parts.slice(1, 7).map<number>((part) => (part === undefined ? 0 : Number(part)))
  const fraction = parts[7] ? Number(parts[7]) : 0
  const offsetMinutes = parts[9] ? (parts[9] === '-' ? -1 : 1) * (Number(parts[10]) * 60 + Number(parts[11])) : 0
  // Offsets in use run from -12:00 to +14:00: one beyond ±14:00 is a typo, not a place.
  if (month! < 1 || month! > 12 || hour! > 23 || minute! > 59 || second > 59 || Math.abs(offsetMinutes) > 14 * 60 || Number(parts[11] ?? 0) > 59)
    return undefined
  // Date.UTC reads years 0–99 as 1900–1999: the year is set on its own.
  const date = new Date(Date.UTC(2000, month! - 1, day, hour, minute, second))
  date.setUTCFullYear(year!, month! - 1, day)
  const local = date.getTime()
  // A date rolls 31 April over to 1 May: a day the month does not have is refused.
  if (date.getUTCDate() !== day || year! < 1) return undefined
  return new Date(local + Math.floor(fraction * 1000) - offsetMinutes * 60_000)
}

/**
 * A `sendAt` as a URL's query gives it. In a query string `+` stands for a space (the form
 * encoding, which Fastify's query parser follows), so `?sendAt=2026-12-20T09:00:00+01:00` sent
 * without encoding arrives as `2026-12-20T09:00:00 01:00`. A space just before the offset's
 * `hh:mm` can only have been that `+` (a `-` arrives as it was sent), so it is read as one.
 * Writing `%2B` for the `+`, or the time in UTC with `Z`, needs no such reading.
 */
export function queryDateTime(value: string | null | undefined): string | null | undefined {
  return typeof value !== 'string' ? value : value.replace(/^(\S+[Tt]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?) (\d{2}:\d{2})$/, '$1+$2')
}

/**
 * A request's `sendAt`, checked: null when absent (the letter goes at once), else an instant from
 * SEND_AT_MIN_LEAD_MS to SEND_AT_MAX_LEAD_MS after now. Anything else is a 400 that names the rule.
 */
export function checkedSendAt(value: string | null | undefined, now = Date.now()): Date | null {
  if (value === undefined || value === null) return null
  const instant = parseDateTime(value)
  const refused = (why: string) => badRequest(`El campo ${publicApi.SEND_AT_RULE}; '${value}' ${why}`)
  if (!instant) throw refused('no es una fecha y hora válida con zona horaria')
  const lead = instant.getTime() - now
  if (lead <= 0) throw refused('ya ha pasado')
  if (lead < publicApi.SEND_AT_MIN_LEAD_MS) throw refused(`está a menos de ${publicApi.SEND_AT_MIN_LEAD_TEXT}`)
  if (lead > publicApi.SEND_AT_MAX_LEAD_MS) throw refused(`está a más de ${publicApi.SEND_AT_MAX_LEAD_TEXT}`)
  return instant
}
