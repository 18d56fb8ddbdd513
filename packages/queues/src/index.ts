export { OutboxDispatcher, type DispatcherOptions } from './dispatcher.js'
export { closeQueues, jobOptions, openQueues, producerConnection, workerConnection, type Logger, type Queues } from './queues.js'
export { inPipelineStatuses, refreshPipelineGauges } from './pipeline-state.js'
export { Reconciler, RESUMED_DETAIL, type ReconcilerOptions } from './reconciler.js'
