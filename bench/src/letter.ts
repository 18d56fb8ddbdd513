import { withKey, type BenchAccount } from './accounts.js'
import type { LoadTarget } from './http-load.js'

/** The letter every row sends, renders and prints: a 600-character message, a full card. */
export const MESSAGE =
  'Querida Lucía: muchas gracias por tu pedido y por la confianza que depositas en nuestra pequeña papelería desde hace tantos años. ' +
  'Hemos preparado cada pieza a mano, con el mismo cuidado de siempre, y esperamos que el cuaderno de tapas azules y las plumas lleguen en perfecto estado. ' +
  'Si algo no fuera como esperabas, escríbenos sin dudarlo y lo resolveremos enseguida. ' +
  'Te deseamos un otoño lleno de cartas bonitas, paseos tranquilos y tardes de lectura junto a la ventana. ' +
  'Recuerda que el próximo mes abrimos el taller de caligrafía de los jueves; nos encantaría verte. Abrazos de todo el equipo, Ana.'

export const SENDER_NAME = 'Papelería Luna'

const RECIPIENT = { name: 'Lucía', surname: 'García', address: 'C/ Mayor 1', zip: '28013', city: 'Madrid', province: '', country: 'ES' }

/** The body of POST /single for `account`. */
export function singleLetter(account: BenchAccount) {
  return { cardDesignId: account.cardDesignId, envelopeDesignId: account.envelopeDesignId, senderId: account.senderId, message: MESSAGE, ...RECIPIENT }
}

/** The same letter for the bare path, which has no auth: the account goes in the body. */
export function bareLetter(account: BenchAccount) {
  return { accountId: account.id, ...singleLetter(account) }
}

/** POST /single on `gateway`, connection i sending as accounts[i % length]. */
export const creationTarget = (gateway: string, accounts: BenchAccount[]): LoadTarget => ({
  url: `${gateway}/single`,
  method: 'POST',
  requests: accounts.map((account) => ({ headers: withKey(account), body: singleLetter(account) })),
})

/** GET /cards?limit=20 on `gateway`, connection i reading as accounts[i % length]. */
export const listTarget = (gateway: string, accounts: BenchAccount[]): LoadTarget => ({
  url: `${gateway}/cards?limit=20`,
  requests: accounts.map((account) => ({ headers: withKey(account) })),
})
