import { buildApp, type AppOptions } from './app.js'
import { FEATURES } from './features/index.js'

export type { App, AppOptions } from './app.js'

/** The gateway: the shell with every feature. What `main.ts`, the tests and the bench start. */
export const buildGateway = (options: AppOptions) => buildApp(options, FEATURES)
