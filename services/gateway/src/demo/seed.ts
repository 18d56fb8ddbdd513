import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { count, sql } from 'drizzle-orm'
import { accounts, dashboardUsers, type Db } from '@letters/db'
import { hashPassword } from '../features/dashboard/passwords.js'
import { demoDesigns } from './artwork.js'
import { createAccount } from '../features/accounts/accounts.js'
import { createCampaign } from '../features/campaigns/campaigns.js'
import { createCardDesign, createEnvelopeDesign, findCardDesign, findEnvelopeDesign, putArtwork } from '../features/designs/designs.js'
import { createSender } from '../features/senders/senders.js'
import { createSignature, findSignature } from '../features/senders/signatures.js'
import { createAccountFont, putAccountFontFile } from '../features/designs/fonts.js'

/** Any constant: two gateways starting together must not both seed. */
const SEED_LOCK_ID = 727_002

const svg = (text: string) => ({ contentType: 'image/svg+xml', data: Buffer.from(text) })

/**
 * The demo's own font, as a client would upload theirs: Patrick Hand (SIL Open Font License 1.1),
 * from its npm package, written on the plotter in kalam's strokes.
 */
export const demoFont = {
  name: 'patrick-hand',
  family: 'Patrick Hand',
  plotterFont: 'kalam',
  file: '@fontsource/patrick-hand/files/patrick-hand-latin-400-normal.woff2',
} as const

/**
 * On an empty database, creates a demo account with everything needed to send a letter and see
 * it as it will be printed: a printed and a preprinted card design with their artwork, a white
 * and a kraft envelope with a logo, a sender with a return address, a signature drawn as
 * strokes, a font of its own and a campaign. Returns its API key (shown once), and the ids a quick start names;
 * undefined when the database already has accounts.
 */
export async function seedDemoAccount(pool: Db): Promise<{ accountId: string; apiKey: string; designs: DemoIds; owner: DemoOwner } | undefined> {
  // Everything in the transaction that holds the lock: a gateway stopped part-way seeds nothing,
  // and the next start seeds the whole account.
  return pool.transaction(async (db) => {
    await db.execute(sql`SELECT pg_advisory_xact_lock(${SEED_LOCK_ID})`)
    const [existing] = await db.select({ n: count() }).from(accounts)
    if (existing && existing.n > 0) return undefined

    const account = await createAccount(db, { name: 'Cuenta de demostración', credits: 100 })
    const cards = []
    for (const { artwork, ...card } of demoDesigns.cards) {
      const created = await createCardDesign(db, account.id, card)
      await putArtwork(db, 'card-designs', { accountId: account.id, ownerId: created.id }, svg(artwork), findCardDesign)
      cards.push(created)
    }
    const envelopes = []
    for (const { logo, ...envelope } of demoDesigns.envelopes) {
      const created = await createEnvelopeDesign(db, account.id, envelope)
      await putArtwork(db, 'envelope-designs', { accountId: account.id, ownerId: created.id }, svg(logo), findEnvelopeDesign)
      envelopes.push(created)
    }
    const sender = await createSender(db, account.id, demoDesigns.sender)
    const signature = await createSignature(db, account.id, demoDesigns.signature.name)
    await putArtwork(db, 'signatures', { accountId: account.id, ownerId: signature.id }, svg(demoDesigns.signature.svg), findSignature)
    const { file, ...font } = demoFont
    await createAccountFont(db, account.id, font)
    await putAccountFontFile(db, account.id, font.name, { contentType: 'font/woff2', data: readFileSync(createRequire(import.meta.url).resolve(file)) })
    await createCampaign(db, account.id, {
      name: 'Bienvenida de clientes',
      active: true,
      cardDesignId: cards[0]!.id,
      envelopeDesignId: envelopes[1]!.id,
      senderId: sender.id,
      signatureId: signature.id,
      message: 'Hola {{nombre}}:\n\nGracias por confiar en nosotros. Tu código de bienvenida es {{codigo}}.\n\nUn abrazo',
      variables: [
        { name: 'nombre', maxSize: 40, defaultValue: 'amigo', example: 'Lucía' },
        { name: 'codigo', maxSize: 12, defaultValue: null, example: 'HOLA2026' },
      ],
    })
    const designs = {
      cardDesigns: cards.map(({ id, name }) => ({ id, name })),
      envelopeDesigns: envelopes.map(({ id, name }) => ({ id, name })),
      senderId: sender.id,
      signatureId: signature.id,
    }
    // The demo's owner signs in to the dashboard with a random password, shown once like the key.
    const owner = { email: DEMO_OWNER_EMAIL, password: randomBytes(12).toString('base64url') }
    await db.insert(dashboardUsers).values({ accountId: account.id, email: owner.email, role: 'owner', passwordHash: await hashPassword(owner.password) })
    return { accountId: account.id, apiKey: account.apiKey, designs, owner }
  })
}

/** The demo account's owner in the dashboard. */
export const DEMO_OWNER_EMAIL = 'demo@example.com'

export interface DemoOwner {
  email: string
  /** Shown once, at the start that seeded it. */
  password: string
}

/** The demo's designs, for the quick start the gateway prints. */
export interface DemoIds {
  cardDesigns: Array<{ id: string; name: string }>
  envelopeDesigns: Array<{ id: string; name: string }>
  senderId: string
  signatureId: string
}
