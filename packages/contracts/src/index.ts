export * from './common.js'
export * from './jobs.js'
export * as admin from './admin.js'
