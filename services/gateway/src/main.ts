import { drainTimeMs, loadConfigOrExit } from '@letters/config'
import { createLogger } from '@letters/observability'
import { awaitSchema, guardProcess } from '@letters/startup'
import { purgeExpiredIdempotencyKeys } from '@letters/intake'
import { LetterClock, OutboxDispatcher } from '@letters/pipeline'
import { buildGateway } from './server.js'
import { PersonalDataEraser } from './features/personal-data/personal-data.js'
import { demoFont, seedDemoAccount, type DemoIds } from './demo/seed.js'

const config = loadConfigOrExit()
await awaitSchema(config, createLogger('gateway', config.logLevel))
const app = await buildGateway({ config })

if (config.seedDemo) {
  const demo = await seedDemoAccount(app.db)
  if (demo) {
    app.log.info({ accountId: demo.accountId }, 'demo account created with 100 credits')
    // The key is shown once, here, and never again: print it where a person will see it.
    const base = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}`
    const { cardDesigns, envelopeDesigns } = demo.designs
    process.stdout.write(
      [
        '',
        `  Demo API key (shown once): ${demo.apiKey}`,
        `  Its designs: ${cardDesigns.map((card) => `${card.name} (${card.id})`).join(', ')}; ${envelopeDesigns.map((envelope) => `${envelope.name} (${envelope.id})`).join(', ')}`,
        `  Try: curl -H 'X-API-KEY: ${demo.apiKey}' ${base}/company-data`,
        `       curl -H 'X-API-KEY: ${demo.apiKey}' ${base}/card-designs/${cardDesigns[0]!.id}/preview -o tarjeta.png`,
        `       curl -H 'X-API-KEY: ${demo.apiKey}' ${base}/fonts   (its own font: fontName "${demoFont.name}")`,
        '',
        `  Its first letter, signed with its drawn signature (printed within seconds into ${config.spoolDir}):`,
        `  ${firstLetterCurl(base, demo.apiKey, demo.designs)}`,
        '',
        `  Dashboard: ${config.publicBaseUrl}/dashboard/`,
        `    email ${demo.owner.email}, password (shown once): ${demo.owner.password}`,
        '',
        `  Another API key, once this one has scrolled away${config.adminToken ? '' : ' (start the gateway with ADMIN_TOKEN set first)'}:`,
        `    LETTERS_URL=${base} ADMIN_TOKEN=<your ADMIN_TOKEN> npm run admin -- keys issue ${demo.accountId}`,
        '',
        '',
      ].join('\n'),
    )
  }
}

/**
 * A POST /single of the demo's own designs, sender and drawn signature, on one line: the line a
 * supervisor prints is prefixed with the process's name, so a command spread over several lines
 * could not be pasted as shown. No single quote in the body: it is quoted with them.
 */
function firstLetterCurl(base: string, apiKey: string, designs: DemoIds): string {
  const body = {
    cardDesignId: designs.cardDesigns[0]!.id,
    envelopeDesignId: designs.envelopeDesigns[0]!.id,
    senderId: designs.senderId,
    signatureId: designs.signatureId,
    message: 'Hola Lucía:\n\nGracias por tu primer pedido. ¡Esperamos verte pronto!',
    name: 'Lucía',
    surname: 'García',
    address: 'Calle Mayor 1',
    zip: '28013',
    city: 'Madrid',
    country: 'ES',
  }
  return `curl -sS -X POST ${base}/single -H 'X-API-KEY: ${apiKey}' -H 'Content-Type: application/json' -d '${JSON.stringify(body)}'`
}

// Every gateway moves outbox rows to BullMQ; any number of them can run side by side.
const dispatcher = new OutboxDispatcher(app.db, app.queues, app.log.child({ component: 'outbox' }))
dispatcher.start()
// Every gateway runs the letter clock too (scheduled letters, test letters' mailing): any number of clocks move each letter once.
const clock = new LetterClock(app.db, app.log.child({ component: 'clock' }), {
  intervalMs: config.clockIntervalMs,
  testMailedAfterMs: config.testMailedAfterMs,
})
clock.start()
// And the eraser of personal data past its retention: any number of them share the letters.
const eraser = new PersonalDataEraser(
  { db: app.db, artifacts: app.artifacts, log: app.log.child({ component: 'eraser' }) },
  { retentionMs: config.personalDataRetentionMs },
)
eraser.start()

const purge = setInterval(() => {
  purgeExpiredIdempotencyKeys(app.db).catch((err: unknown) => app.log.warn({ err }, 'could not purge expired idempotency keys'))
}, 10 * 60_000).unref()

guardProcess({ log: app.log, delay: drainTimeMs('gateway', config) }, async ({ signal, err }) => {
  if (err) app.log.error({ err }, 'shutting down after an error')
  else app.log.info({ signal }, 'shutting down')
  clearInterval(purge)
  await clock.stop()
  await eraser.stop()
  await dispatcher.stop()
  await app.close()
})

await app.listen({ host: config.host, port: config.port })
