import type { RouteOptions } from 'fastify'
import type { App } from '@letters/gateway/server'

/**
 * What is not part of the public contract, decided here by path and not by the mechanism that
 * builds the document (the public scopes' onRoute mark), so that a public route registered
 * outside those scopes is caught instead of silently left out of both.
 */
const INTERNAL = [
  /^\/admin(\/|$)/,
  /^\/ops(\/|$)/,
  /^\/floor(\/|$)/,
  /^\/metrics$/,
  /^\/healthz$/,
  /^\/readyz$/,
  /^\/openapi\.json$/,
  /^\/docs(\/|$)/,
  /^\/dashboard(\/|$)/,
]
export const isInternal = (url: string) => INTERNAL.some((pattern) => pattern.test(url))

/** `/cards/:cardId` → `/cards/{cardId}`. */
export const openapiPath = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}')

interface Document {
  paths: Record<string, Record<string, { responses: Record<string, unknown> }>>
  components?: { responses?: Record<string, unknown> }
}

type Route = { method: string; url: string }
const routesOf = new WeakMap<App, Route[]>()

/**
 * An onRoute hook for buildGateway that keeps every route the app registers (HEAD left out: Fastify
 * adds it to each GET), and `remember`, which files the list under the app once it is built.
 */
export function routeRecorder() {
  const routes: Route[] = []
  return {
    onRoute(route: RouteOptions) {
      for (const method of [route.method].flat()) if (method !== 'HEAD') routes.push({ method, url: route.url })
    },
    remember: (app: App) => routesOf.set(app, routes),
  }
}

/** Every route the app has, with its methods, as its onRoute hook saw them (openGateway installs it). */
export function registeredRoutes(app: App): Route[] {
  const routes = routesOf.get(app)
  if (!routes) throw new Error('this app was not built by openGateway, which records its routes')
  return routes
}

/**
 * The contract's status check, on every gateway the tests start (startGateway): each answer of
 * a public route is looked up in the served document (app.swagger(), the same object as
 * /openapi.json), and a status that is not there is recorded; closing the app then fails, so
 * the test file that observed an undocumented status (a 413 a route never declared, a route
 * left out of the document) fails where the status was produced. Checking the document
 * rather than the routes' schemas covers both ends: what the schema declares and what the
 * document renders from it.
 */
export function checkStatusesAgainstContract(app: App) {
  const undocumented = new Set<string>()
  app.addHook('onResponse', async (request, reply) => {
    const url = request.routeOptions.url
    const document = app.swagger() as unknown as Document
    if (!url && reply.statusCode === 405 && !document.components?.responses?.MethodNotAllowed)
      undocumented.add(`${request.method} ${request.url.split('?')[0]} → 405`)
    if (!url || isInternal(url) || request.method === 'HEAD') return
    const operation = document.paths[openapiPath(url)]?.[request.method.toLowerCase()]
    if (!operation?.responses[String(reply.statusCode)]) undocumented.add(`${request.method} ${url} → ${reply.statusCode}`)
  })
  app.addHook('onClose', async () => {
    if (undocumented.size > 0) throw new Error(`Answers missing from /openapi.json: ${[...undocumented].join('; ')}`)
  })
}
