const dateTime = new Intl.DateTimeFormat('es-ES', { dateStyle: 'medium', timeStyle: 'short' })
const dateOnly = new Intl.DateTimeFormat('es-ES', { dateStyle: 'medium' })
const numbers = new Intl.NumberFormat('es-ES')

/** "3 dic 2026, 10:15"; a dash for a missing date. */
export const formatDateTime = (iso: string | null | undefined) => (iso ? dateTime.format(new Date(iso)) : '—')
export const formatDate = (iso: string | null | undefined) => (iso ? dateOnly.format(new Date(iso)) : '—')

const percent = new Intl.NumberFormat('es-ES', { style: 'percent', maximumFractionDigits: 1 })

/** "12.500": a count as Spanish writes it. */
export const formatNumber = (count: number) => numbers.format(count)

/** A share from 0 to 1 as Spanish writes it: "75 %", "12,5 %". */
export const formatPercent = (share: number) => percent.format(share)

/** "1 crédito", "3 créditos", "-3 créditos". */
export const formatCredits = (credits: number) => `${numbers.format(credits)} ${Math.abs(credits) === 1 ? 'crédito' : 'créditos'}`

/** "1 carta", "12 cartas". */
export const formatCount = (count: number, one: string, many: string) => `${numbers.format(count)} ${count === 1 ? one : many}`

/** A date input's value (YYYY-MM-DD) as the start of that day where the person is, as the API wants it (ISO 8601 with an offset). */
export function startOfDay(value: string): string | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value)
  if (!match) return undefined
  return new Date(Number(match[1]), Number(match[2]) - 1, Number(match[3])).toISOString()
}

/** The start of the day after: the API's `to` is exclusive, a person's "hasta el 30" includes the 30th. */
export function startOfNextDay(value: string): string | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value)
  if (!match) return undefined
  return new Date(Number(match[1]), Number(match[2]) - 1, Number(match[3]) + 1).toISOString()
}
