/**
 * Baseline: the fastest a Fastify route answers on this machine, in a process of its own like
 * the gateway. The list GETs are compared with it. Kept as written so that runs stay comparable.
 */
import Fastify from 'fastify'
import { loadConfigOrExit } from '@letters/config'

const config = loadConfigOrExit()
const app = Fastify()
app.get('/', async () => ({ hello: 'world' }))
app.get('/healthz', async () => ({ ok: true }))
await app.listen({ host: config.host, port: config.port })
