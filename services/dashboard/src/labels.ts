// Spanish names of the API's codes, in one place: what people read instead of `address_rejected`.

/**
 * Copied from packages/contracts/src/letter-statuses.ts (letterStatuses, letterStatusNames,
 * erasableStatuses): @letters/contracts exports only its root, which pulls TypeBox and every
 * schema into the bundle. Keep in step with that file.
 */
export const letterStatuses = ['scheduled', 'received', 'ready_for_print', 'printing', 'printed', 'mailed', 'address_rejected', 'cancelled', 'failed'] as const
export type LetterStatus = (typeof letterStatuses)[number]

export const letterStatusNames: Record<LetterStatus, string> = {
  scheduled: 'programada',
  received: 'recibida',
  ready_for_print: 'lista para imprimir',
  printing: 'en impresión',
  printed: 'impresa',
  mailed: 'enviada',
  address_rejected: 'dirección rechazada',
  cancelled: 'cancelada',
  failed: 'fallida',
}

/** A status as a heading or a table cell shows it: capitalised. */
export const statusName = (status: string) => capitalise(letterStatusNames[status as LetterStatus] ?? status)

/** Where the personal data of a letter may be erased (erasableStatuses in the contracts). */
export const erasableStatuses: readonly string[] = ['printed', 'mailed', 'cancelled', 'address_rejected', 'failed']

/** Where the API lets a client cancel a letter (the moves into `cancelled`, packages/letters/src/transitions.ts). */
export const cancellableStatuses: readonly string[] = ['scheduled', 'received', 'ready_for_print']

/** The inks of packages/contracts/src/fonts.ts (inkColors, inkNames), in the order offered. */
export const inkColors = ['blue', 'black', 'green', 'purple', 'red'] as const
export type InkColor = (typeof inkColors)[number]
export const inkNames: Record<InkColor, string> = { blue: 'Azul', black: 'Negra', green: 'Verde', purple: 'Morada', red: 'Roja' }
export const inkName = (ink: string) => inkNames[ink as InkColor] ?? ink

export type Role = 'owner' | 'member' | 'viewer'
export const roles: readonly Role[] = ['owner', 'member', 'viewer']
// As packages/contracts/src/dashboard-roles.ts names them (dashboardRoleNames), capitalised.
export const roleNames: Record<Role, string> = { owner: 'Propietario', member: 'Miembro', viewer: 'Lector' }
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

/** `letter.printed` → "Carta impresa"; `webhook.test` → "Prueba". */
export function eventTypeName(type: string): string {
  if (type === 'webhook.test') return 'Prueba'
  const status = type.replace(/^letter\./, '')
  return `Carta ${letterStatusNames[status as LetterStatus] ?? status}`
}

export function capitalise(text: string): string {
  return text.charAt(0).toLocaleUpperCase('es-ES') + text.slice(1)
}
