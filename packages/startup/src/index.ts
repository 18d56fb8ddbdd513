export { guardProcess, type GuardLogger, type ShutdownReason } from './guard.js'
export { runWorkerProcess, type RunningWorker, type WorkerProcess } from './worker-process.js'
export { awaitSchema, type StartupLogger } from './database.js'
