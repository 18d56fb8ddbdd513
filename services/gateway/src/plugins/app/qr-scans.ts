import fp from 'fastify-plugin'
import { QrScanJournal } from '@letters/letters'

declare module 'fastify' {
  interface FastifyInstance {
    /** The requests for QR links, written behind their redirects, a batch at a time. */
    qrScans: QrScanJournal
  }
}

/** How long a stop waits for the requests for QR links not yet written: within the gateway's drain time. */
const WRITE_AT_STOP_MS = 5000

export default fp(
  async (app) => {
    const journal = new QrScanJournal(app.db, { log: app.log.child({ component: 'qr-scans' }) })
    app.decorate('qrScans', journal)
    // Written before the pool closes: a stop loses no scan it answered.
    app.addHook('onClose', () => journal.close(WRITE_AT_STOP_MS))
  },
  { name: 'qr-scans', dependencies: ['config', 'postgres'] },
)
