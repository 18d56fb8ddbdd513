export { OutboxDispatcher, type DispatcherOptions } from './dispatcher.js'
export { closeQueues, jobOptions, openQueues, producerConnection, workerConnection, type Logger, type Queues } from './queues.js'
export { refreshPipelineGauges } from './pipeline-state.js'
export { pipelineStatuses, Reconciler, RESUMED_DETAIL, type ReconcilerOptions } from './reconciler.js'
