import { count } from 'drizzle-orm'
import { accounts, type Db } from '@letters/db'
import { createAccount } from './services/accounts.js'
import { createCampaign } from './services/campaigns.js'
import { createEntry } from './services/company-data.js'

/** Any constant: two gateways starting together must not both seed. */
const SEED_LOCK_ID = 727_002

/**
 * On an empty database, creates a demo account with everything needed to send a letter and
 * returns its API key (shown once). Returns undefined when the database already has accounts.
 */
export async function seedDemoAccount(db: Db): Promise<{ accountId: string; apiKey: string } | undefined> {
  return db.$client.begin(async (sql) => {
    await sql`SELECT pg_advisory_xact_lock(${SEED_LOCK_ID})`
    const [existing] = await db.select({ n: count() }).from(accounts)
    if (existing && existing.n > 0) return undefined

    const account = await createAccount(db, { name: 'Cuenta de demostración', credits: 100 })
    const [cardDesign] = [
      await createEntry(db, 'card-designs', account.id, 'Tarjeta clásica'),
      await createEntry(db, 'card-designs', account.id, 'Tarjeta floral'),
    ]
    const [envelopeDesign] = [
      await createEntry(db, 'envelope-designs', account.id, 'Sobre blanco'),
      await createEntry(db, 'envelope-designs', account.id, 'Sobre kraft'),
    ]
    const sender = await createEntry(db, 'senders', account.id, 'Equipo de Demostración')
    await createEntry(db, 'signatures', account.id, 'Firma de Ana')
    await createCampaign(db, account.id, {
      name: 'Bienvenida de clientes',
      active: true,
      cardDesignId: cardDesign.id,
      envelopeDesignId: envelopeDesign.id,
      senderId: sender.id,
      message: 'Hola {{nombre}}:\n\nGracias por confiar en nosotros. Tu código de bienvenida es {{codigo}}.\n\nUn abrazo',
      variables: [
        { name: 'nombre', maxSize: 40, defaultValue: 'amigo', example: 'Lucía' },
        { name: 'codigo', maxSize: 12, defaultValue: null, example: 'HOLA2026' },
      ],
    })
    return { accountId: account.id, apiKey: account.apiKey }
  })
}
