export { createLogger, loggerOptions, safeError, withoutQueryParameters, type SafeError } from './log.js'
export * as metrics from './metrics.js'
export { registry, pipelineRegistry } from './metrics.js'
export { startMetricsServer, type MetricsServerOptions } from './metrics-server.js'
