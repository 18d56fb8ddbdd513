export { OutboxDispatcher, type DispatcherOptions } from './dispatcher.js'
export { closeQueues, jobOptions, openQueues, producerConnection, workerConnection, type Queues } from './queues.js'
