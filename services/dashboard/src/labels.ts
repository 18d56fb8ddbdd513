// Spanish names of the API's codes, in one place: what people read instead of `address_rejected`.
import { formatCount } from './format'

// Pure modules of the contracts (no TypeBox), so that the bundle takes only these lists.
import {
  cancellableStatuses as cancellable,
  erasableStatuses as erasable,
  letterStatusNames,
  letterStatuses,
  type LetterStatus,
} from '@letters/contracts/letter-statuses'
import { dashboardRoleNames, dashboardRoles, type DashboardRole } from '@letters/contracts/dashboard-roles'
// Types only: the module itself builds TypeBox schemas, which the bundle has no use for.
import type { ReturnReason } from '@letters/contracts'

export { letterStatuses, letterStatusNames, type LetterStatus }

/** The statuses after a count of letters, agreeing with it: "1 impresa", "5 impresas". */
const letterStatusPlurals: Record<LetterStatus, string> = {
  scheduled: 'programadas',
  received: 'recibidas',
  ready_for_print: 'listas para imprimir',
  printing: 'en impresión',
  printed: 'impresas',
  mailed: 'enviadas',
  returned: 'devueltas',
  address_rejected: 'con la dirección rechazada',
  cancelled: 'canceladas',
  failed: 'fallidas',
}
const letterStatusSingulars: Partial<Record<LetterStatus, string>> = { address_rejected: 'con la dirección rechazada' }

/** The words after a count of letters in a status, as every count meets its words here (formatCount): "impresa" for 1, "impresas" for 5. */
export const statusWords = (status: LetterStatus, count: number) =>
  count === 1 ? (letterStatusSingulars[status] ?? letterStatusNames[status]) : letterStatusPlurals[status]

/** A status as a heading or a table cell shows it: capitalised. */
export const statusName = (status: string) => capitalise(letterStatusNames[status as LetterStatus] ?? status)

/** Where the personal data of a letter may be erased. */
export const erasableStatuses: readonly string[] = erasable

/** Where the API lets a client cancel a letter. */
export const cancellableStatuses: readonly string[] = cancellable

/** The inks of packages/contracts/src/fonts.ts (inkColors, inkNames), in the order offered. */
export const inkColors = ['blue', 'black', 'green', 'purple', 'red'] as const
export type InkColor = (typeof inkColors)[number]
export const inkNames: Record<InkColor, string> = { blue: 'Azul', black: 'Negra', green: 'Verde', purple: 'Morada', red: 'Roja' }
export const inkName = (ink: string) => inkNames[ink as InkColor] ?? ink

export type Role = DashboardRole
export const roles: readonly Role[] = dashboardRoles
export const roleNames = Object.fromEntries(dashboardRoles.map((role) => [role, capitalise(dashboardRoleNames[role])])) as Record<Role, string>
export const roleHints: Record<Role, string> = {
  owner: 'todo, también claves, webhooks y equipo',
  member: 'enviar y cancelar cartas',
  viewer: 'solo consultar',
}

export const movementKindNames: Record<string, string> = { charge: 'Cargo', refund: 'Devolución', top_up: 'Recarga', adjustment: 'Ajuste' }

export const deliveryOutcomeNames: Record<string, string> = { delivered: 'Entregada', retrying: 'Se reintentará', failed: 'Fallida' }
export const deliveryErrorNames: Record<string, string> = {
  timeout: 'Sin respuesta a tiempo',
  connection: 'No se pudo conectar',
  refused_address: 'Dirección no permitida',
}

/** Why the post brought a letter back, as the floor names it (returnReasonLabels in packages/contracts/src/tracking.ts). */
export const returnReasonNames: Record<ReturnReason, string> = {
  unknown_recipient: 'Desconocido',
  bad_address: 'Dirección incorrecta o incompleta',
  refused: 'Rehusado',
  moved: 'Se ha mudado',
  deceased: 'Fallecido',
  other: 'Otro motivo',
}
export const returnReasonName = (reason: string) => returnReasonNames[reason as ReturnReason] ?? reason

/** A scan of a letter's QR code: an event of its own, no change of status (QR_SCANNED_EVENT in the contracts). */
const QR_SCANNED_EVENT = 'letter.qr_scanned'

/** The letter events an endpoint may subscribe to, in the contracts' order (webhookEventTypes): one per status, then a scan of the QR code. */
export const letterEventTypes: readonly string[] = [...letterStatuses.map((status) => `letter.${status}`), QR_SCANNED_EVENT]

/** `letter.printed` → "Carta impresa"; `letter.qr_scanned` → "Código QR escaneado"; `webhook.test` → "Prueba". */
export function eventTypeName(type: string): string {
  if (type === 'webhook.test') return 'Prueba'
  if (type === QR_SCANNED_EVENT) return 'Código QR escaneado'
  const status = type.replace(/^letter\./, '')
  return `Carta ${letterStatusNames[status as LetterStatus] ?? status}`
}

export function capitalise(text: string): string {
  return text.charAt(0).toLocaleUpperCase('es-ES') + text.slice(1)
}

/** The API's names of a letter's recipient fields, as the address check's corrections name them. */
const addressFieldNames: Record<string, string> = {
  name: 'nombre',
  surname: 'apellidos',
  company: 'empresa',
  address: 'dirección',
  zip: 'código postal',
  city: 'ciudad',
  province: 'provincia',
  country: 'país',
}

/**
 * The details of a letter's history as the workers write them (services/production-worker,
 * packages/letters, packages/pipeline, services/address-worker), in the words of someone who sends
 * letters: no printer's queue ("spool"), batch id, print journal or "operaciones". A detail not
 * known here is shown as it is.
 */
const eventDetails: [RegExp, (...groups: string[]) => string][] = [
  // produce-letter.ts: `Entregada a la impresora (${printer}): tarjeta y sobre`, or al plóter.
  [
    /^Entregada (al plóter|a la impresora) \([^)]*\): (.+)$/,
    (to, what) => `Enviada ${to === 'al plóter' ? 'a la máquina que la escribe' : 'a la impresora'}: ${what}`,
  ],
  // on-paper.ts, batchPrintedDetail: `Entregada a la impresora en el lote ${batchId} (n.º ${n} de ${count})`, and from the print journal.
  [
    /^Entregada a la impresora en el lote \S+ \(n\.º \d+ de (\d+)\)(?:, según el diario de impresión)?$/,
    (count) => (Number(count) > 1 ? `Enviada a la impresora junto con ${formatCount(Number(count) - 1, 'carta más', 'cartas más')}` : 'Enviada a la impresora'),
  ],
  // on-paper.ts, JOURNAL_PRINTED_DETAIL.
  [
    /^Ya se había entregado a la impresora, según el diario de impresión: no se vuelve a imprimir$/,
    () => 'Ya se había enviado a la impresora: no se vuelve a imprimir',
  ],
  // produce-letter.ts, claimDetail and markFailed; ops-retry.ts, RETRIED_DETAIL.
  [/^En producción de nuevo: reintento pedido por operaciones$/, () => 'En producción de nuevo: nuestro equipo lo ha pedido'],
  [/^Reintento de producción pedido por operaciones$/, () => 'Nuestro equipo ha pedido producirla de nuevo'],
  [/^La producción falló(.*); operaciones revisará la carta$/, (attempts) => `La producción falló${attempts}; nuestro equipo revisará la carta`],
  // normalize-letter.ts: `Dirección corregida: ${field} (${reason}), …`, with the API's field names.
  [
    /^Dirección corregida: (.+)$/,
    (changes) =>
      `Dirección corregida: ${changes.replace(/(^|, )([a-z]+) \(/g, (_match, comma: string, field: string) => `${comma}${addressFieldNames[field] ?? field} (`)}`,
  ],
]

/** A letter event's detail in plain Spanish (see eventDetails); an unknown one as it is. */
export function eventDetailText(detail: string): string {
  for (const [pattern, text] of eventDetails) {
    const match = pattern.exec(detail)
    if (match) return text(...match.slice(1).map((group) => group ?? ''))
  }
  return detail
}
