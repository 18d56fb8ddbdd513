import { randomUUID } from 'node:crypto'
import { topUp } from '@letters/credits'
import { accounts, cardDesigns, envelopeDesigns, letters, senders, signatures, type Db, type Recipient } from '@letters/db'
import type { CountryCode, VerifiedAddress } from '@letters/contracts'

export async function newAccount(db: Db, options: { credits?: number; name?: string } = {}) {
  return db.transaction(async (tx) => {
    const [account] = await tx
      .insert(accounts)
      .values({ name: options.name ?? `Cuenta ${randomUUID().slice(0, 8)}` })
      .returning()
    if (!account) throw new Error('account insert returned nothing')
    if (options.credits) await topUp(tx, account.id, options.credits, 'test set-up')
    return { ...account, balance: options.credits ?? 0 }
  })
}

/** One of each named entry an account needs to send a letter. */
export async function newCompanyData(db: Db, accountId: string) {
  const insert = async (table: typeof cardDesigns | typeof envelopeDesigns | typeof senders | typeof signatures, name: string) => {
    const [row] = await db
      .insert(table as typeof signatures)
      .values({ accountId, name })
      .returning({ id: (table as typeof signatures).id })
    if (!row) throw new Error(`insert into ${name} returned nothing`)
    return row.id
  }
  return {
    cardDesignId: await insert(cardDesigns, 'Tarjeta de prueba'),
    envelopeDesignId: await insert(envelopeDesigns, 'Sobre de prueba'),
    senderId: await insert(senders, 'Remitente de prueba'),
    signatureId: await insert(signatures, 'Firma de prueba'),
  }
}

export const sampleRecipient: Recipient = {
  name: 'Lucía',
  surname: 'García',
  company: null,
  address: 'Calle Mayor 1',
  zip: '28013',
  city: 'Madrid',
  province: 'Madrid',
  country: 'ES',
}

/** A valid Spanish recipient, as a request body sends it (no company). */
const { company: _company, ...bodyRecipient } = sampleRecipient
export const spanishRecipient = { ...bodyRecipient, country: 'ES' as CountryCode }

/** A valid POST /single body for the account, with `overrides` on top. */
export function singleLetter(account: { cardDesignId: string; envelopeDesignId: string; senderId: string }, overrides: Record<string, unknown> = {}) {
  return {
    cardDesignId: account.cardDesignId,
    envelopeDesignId: account.envelopeDesignId,
    senderId: account.senderId,
    message: 'Querida Lucía, gracias por tu compra.',
    ...spanishRecipient,
    ...overrides,
  }
}

/** The tests' campaign, as the admin API takes it (designs and sender added by whoever creates it): "¡Feliz Navidad, {{nombre}}! Usa {{cupon}} antes del 6 de enero." in dancing-script, nombre ≤ 10 characters defaulting to "amigo", cupon ≤ 8 without default. */
export const christmasCampaign = {
  name: 'Navidad',
  fontName: 'dancing-script',
  message: '¡Feliz Navidad, {{nombre}}! Usa {{cupon}} antes del 6 de enero.',
  variables: [
    { name: 'nombre', maxSize: 10, defaultValue: 'amigo', example: 'Lucía' },
    { name: 'cupon', maxSize: 8, defaultValue: null, example: 'NAVIDAD' },
  ],
}

/** A letter's address as the address worker stores it once verified; `overrides` on top. */
export function verifiedAddress(overrides: Partial<VerifiedAddress> = {}): VerifiedAddress {
  return { ...sampleRecipient, countryName: 'España', deliverability: 'deliverable', changes: [], problems: [], verifiedBy: 'offline', ...overrides }
}

/** A letter row as the gateway stores it, without charging for it; `overrides` sets any column (a status, an address). */
export async function newLetter(
  db: Db,
  accountId: string,
  company: Awaited<ReturnType<typeof newCompanyData>>,
  overrides: Partial<typeof letters.$inferInsert> = {},
) {
  const [letter] = await db
    .insert(letters)
    .values({
      accountId,
      type: 'single',
      cardDesignId: company.cardDesignId,
      envelopeDesignId: company.envelopeDesignId,
      senderId: company.senderId,
      fontName: 'caveat',
      message: 'Hola',
      recipient: sampleRecipient,
      status: 'received',
      cost: 3,
      ...overrides,
    })
    .returning()
  if (!letter) throw new Error('letter insert returned nothing')
  return letter
}

/** An id no row has: what an unknown id is answered. */
export const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000'
