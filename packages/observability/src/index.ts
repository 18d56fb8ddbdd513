export { createLogger, loggerOptions, logSerializers, safeError, type SafeError } from './log.js'
export * as metrics from './metrics.js'
export { registry } from './metrics.js'
