import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import fastifyStatic from '@fastify/static'
import type { FastifyPluginAsync, FastifyReply } from 'fastify'
import { ApiError } from '../../../common/errors.js'
import { securityHeaders } from '../../../common/security-headers.js'

/** The dashboard's build (services/dashboard/dist), from src/ and dist/ alike. */
export const DASHBOARD_DIST = fileURLToPath(new URL('../../../../../dashboard/dist/', import.meta.url))

/** Hashed file names change with their content: a browser may keep them a year. */
const IMMUTABLE = 'public, max-age=31536000, immutable'

/**
 * The pages' policy: helmet's, and images from `blob:` too (the live preview is a PNG the page
 * fetched, shown through an object URL). Scripts and styles only from this origin.
 */
const PAGE_HEADERS = securityHeaders({
  frameguard: { action: 'deny' },
  contentSecurityPolicy: {
    directives: { frameAncestors: ["'none'"], upgradeInsecureRequests: null, imgSrc: ["'self'", 'data:', 'blob:'], styleSrc: ["'self'"] },
  },
})

async function sendIndex(reply: FastifyReply): Promise<void> {
  const html = await readFile(`${DASHBOARD_DIST}index.html`).catch(() => undefined)
  if (!html) throw new ApiError(503, 'El panel no está compilado: ejecuta npm run build (o npm start, que lo compila)')
  await reply.headers(PAGE_HEADERS).header('cache-control', 'no-cache').type('text/html; charset=utf-8').send(html)
}

/**
 * The dashboard, a single-page app, at /dashboard/: its hashed assets with long-lived cache
 * headers, and index.html for every other path under it (the app's own router reads the path),
 * never cached so that a new release is picked up at the next load.
 */
const dashboardStatic: FastifyPluginAsync = async (app) => {
  app.get('/dashboard', async (_request, reply) => reply.redirect('/dashboard/', 301))
  await app.register(
    async (scope) => {
      await scope.register(fastifyStatic, {
        root: DASHBOARD_DIST,
        prefix: '/',
        index: false,
        decorateReply: false,
        // Only the hashed assets are served as files; index.html goes through sendIndex.
        allowedPath: (path) => path.startsWith('/assets/'),
        setHeaders: (reply) => {
          reply.headers(PAGE_HEADERS).header('cache-control', IMMUTABLE)
        },
      })
      scope.setNotFoundHandler(async (request, reply) => {
        if (request.method !== 'GET' && request.method !== 'HEAD') throw new ApiError(404, `La ruta ${request.method} ${request.url} no existe`)
        // A missing asset is a 404, not the page: a script tag given HTML fails obscurely.
        if (request.url.startsWith('/dashboard/assets/')) throw new ApiError(404, 'El archivo no existe')
        await sendIndex(reply)
      })
    },
    { prefix: '/dashboard' },
  )
}

export default dashboardStatic
