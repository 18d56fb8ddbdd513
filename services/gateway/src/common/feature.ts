import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'

/** A feature's routes for one kind of caller: a plugin the shell registers in that caller's scope. */
export type Routes = FastifyPluginAsyncTypebox

/**
 * One part of what the gateway serves (letters, designs, webhooks…), as the shell sees it: its
 * routes, grouped by who may call them. The shell registers each group inside the scope that
 * authenticates that kind of caller (plugins/app/scopes.ts), so a feature sets up no
 * authentication, no general rate limit and no place in /openapi.json itself; and the shell never
 * imports a feature: `server.ts` hands it the list.
 */
export interface Feature {
  /** The public API: an API key or a dashboard session, limited per account, listed in /openapi.json. */
  api?: Routes
  /** Public routes that take no key (a QR code's link, the dashboard's sign-in): limited per address, listed in /openapi.json. */
  anonymous?: Routes
  /** Under /admin, for the admin token. */
  admin?: Routes
  /** Under /floor, for the floor token; a browser asks for it as the password. */
  floor?: Routes
  /** Pages ops open in a browser, behind the admin token, whose routes a library registers with its own error handler. */
  opsPages?: Routes
  /** Routes that need no caller and are no part of the API: the dashboard's own files. */
  files?: Routes
}

/** Several route plugins as one group, registered in the order given. */
export const routesOf =
  (...plugins: Routes[]): Routes =>
  async (app) => {
    for (const plugin of plugins) await app.register(plugin)
  }
