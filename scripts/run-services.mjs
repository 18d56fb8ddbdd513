// Runs the four processes on one machine: `npm start` (TypeScript through tsx) and
// `npm run start:prod` (the compiled build under plain node). Plain JavaScript, so that the
// production command needs nothing but node.
//
// - Each process is node itself (no shell in between), its output prefixed with its name.
// - A process that stops on its own (a crash) is started again 3 s later; one that keeps
//   crashing within 10 s of its start waits twice as long each time, up to a minute.
// - `--print` prints the commands, one JSON array of arguments per process, and exits: the
//   tests hold compose and Kubernetes to exactly these.
// - Under `--dev` (`npm start`) each worker gets a free port of its own for /metrics and /healthz
//   (METRICS_PORT), chosen once and kept across its restarts, and printed as it starts: a second
//   stack on the same machine then collides with nothing, where the fixed 9101 to 9103 (compose,
//   Kubernetes, `start:prod`) would leave its workers without them. And when this writes to a
//   terminal, each JSON log line is printed through pino-pretty; anywhere else it stays JSON.
// - SIGTERM, SIGINT or SIGHUP stops all four: each is sent SIGTERM once (it drains, then exits),
//   nothing is restarted from then on, and this exits 0 once every process has exited 0 or ended
//   by that SIGTERM (1 otherwise). Should this supervisor itself fail, it stops them the same way.
//   A later signal changes nothing: a terminal's Ctrl-C comes here twice (directly, and through
//   npm), and a process told twice would cut its drain short. Each process bounds its own drain.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createServer } from 'node:net'
import { createInterface } from 'node:readline'

const RESTART_AFTER_MS = 3000
const RESTART_AFTER_MAX_MS = 60_000
/** A process that lived less than this crashed at start (a port taken, a schema to migrate). */
const QUICK_CRASH_MS = 10_000
const STOP_SIGNAL = 'SIGTERM'
const services = [
  { name: 'gateway', dir: 'gateway', color: 36, worker: false },
  { name: 'address', dir: 'address-worker', color: 35, worker: true },
  { name: 'production', dir: 'production-worker', color: 33, worker: true },
  { name: 'webhooks', dir: 'webhook-worker', color: 32, worker: true },
]
const width = Math.max(...services.map((service) => service.name.length))

const dev = process.argv.includes('--dev')
const argvOf = (service) =>
  dev ? ['--import', 'tsx', `services/${service.dir}/src/main.ts`] : ['--conditions=letters-dist', `services/${service.dir}/dist/main.js`]

if (process.argv.includes('--print')) {
  const commands = Object.fromEntries(services.map((service) => [`${service.dir}`, ['node', ...argvOf(service)]]))
  process.stdout.write(`${JSON.stringify(commands)}\n`)
  process.exit(0)
}

const paint = (service, text) => (process.stdout.isTTY ? `\u001b[${service.color}m${text}\u001b[0m` : text)
const label = (service) => paint(service, `[${service.name}]`.padEnd(width + 2))
const say = (service, line) => process.stdout.write(`${label(service)} ${line}\n`)

/**
 * A line a process wrote, as it is shown: pino's JSON made readable in a terminal under `--dev`
 * (pino-pretty, a root devDependency, loaded only then: `start:prod` needs nothing but node), as
 * it came anywhere else, where a log collector reads the JSON.
 */
const readable = dev && process.stdout.isTTY ? await prettyLines() : (line) => [line]

async function prettyLines() {
  const { prettyFactory } = (await import('pino-pretty')).default
  // The label already names the process; pid and host are the same on every line.
  const pretty = prettyFactory({ colorize: true, singleLine: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,name' })
  return (line) => (line.startsWith('{') ? pretty(line).replace(/\n$/, '').split('\n') : [line])
}

/** A port free now on every address, for a worker's /metrics and /healthz. */
async function freePort() {
  const server = createServer().listen(0)
  await once(server, 'listening')
  const { port } = server.address()
  server.close()
  await once(server, 'close')
  return port
}

/**
 * Under `--dev`, each worker's METRICS_PORT: one value in the environment would go to all three,
 * and all but one would run without /metrics and /healthz.
 */
const metricsPorts = new Map()
if (dev) for (const service of services.filter((each) => each.worker)) metricsPorts.set(service.name, await freePort())
const host = process.env.HOST || '127.0.0.1'
const hostInUrl = host.includes(':') ? `[${host}]` : host
const envOf = (service) => (metricsPorts.has(service.name) ? { ...process.env, METRICS_PORT: String(metricsPorts.get(service.name)) } : process.env)

/** The signal that stops everything, once one came. */
let stopping
/** service name → its running child, or a pending restart timer. */
const running = new Map()
const restarts = new Map()
const exitCodes = new Map()
/** service name → the pause before its next restart, doubled while it keeps crashing at start. */
const restartDelays = new Map()

function start(service) {
  const child = spawn(process.execPath, argvOf(service), {
    env: envOf(service),
    stdio: ['ignore', 'pipe', 'pipe'],
    // A group of its own: a terminal's Ctrl-C reaches this process only, which passes it on once.
    detached: true,
  })
  running.set(service.name, child)
  const startedAt = Date.now()
  for (const stream of [child.stdout, child.stderr])
    createInterface({ input: stream }).on('line', (line) => {
      for (const shown of readable(line)) say(service, shown)
      if (service.name === 'gateway' && line.includes('Server listening at')) repeatWorkerPorts()
    })
  child.on('error', (error) => say(service, `could not start: ${error.message}`))
  // 'close', not 'exit': its last lines are written before it counts as gone.
  child.on('close', (code, signal) => {
    running.delete(service.name)
    const how = signal ? `signal ${signal}` : `code ${code}`
    if (stopping) {
      // Ended by the very signal it was passed (it was still starting, before its handler): a
      // clean stop too.
      exitCodes.set(service.name, signal === STOP_SIGNAL ? 0 : (code ?? 1))
      say(service, `${argvOf(service).at(-1)} exited with ${how}`)
      if (running.size === 0) finish()
      return
    }
    const previous = restartDelays.get(service.name) ?? RESTART_AFTER_MS / 2
    const delay = Date.now() - startedAt < QUICK_CRASH_MS ? Math.min(previous * 2, RESTART_AFTER_MAX_MS) : RESTART_AFTER_MS
    restartDelays.set(service.name, delay)
    say(service, `${argvOf(service).at(-1)} exited with ${how}; starting it again in ${delay / 1000} s`)
    restarts.set(
      service.name,
      setTimeout(() => {
        restarts.delete(service.name)
        start(service)
      }, delay),
    )
  })
}

/**
 * The workers' ports once more, as the gateway starts listening: that is just after its banner,
 * where a newcomer reads the key and the first curl, and the lines that gave them first have
 * scrolled away by then. Once per run: a restarted gateway does not repeat them.
 */
let workerPortsRepeated = false
function repeatWorkerPorts() {
  if (workerPortsRepeated || metricsPorts.size === 0) return
  workerPortsRepeated = true
  const urls = [...metricsPorts].map(([name, port]) => `${name} http://${hostInUrl}:${port}`)
  say(services[0], `The workers' /healthz and /metrics: ${urls.join(', ')}`)
}

let failedItself = false

function finish() {
  const failed = failedItself || [...exitCodes.values()].some((code) => code !== 0)
  process.exit(failed ? 1 : 0)
}

function stop(signal) {
  if (stopping) return
  stopping = signal
  for (const timer of restarts.values()) clearTimeout(timer)
  restarts.clear()
  if (running.size === 0) finish()
  for (const child of running.values()) child.kill(STOP_SIGNAL)
}

for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(signal, () => stop(signal))
// The processes run in groups of their own: were this to die with an error, they would run on.
process.on('uncaughtException', (error) => {
  console.error(`the supervisor failed: ${error.message}; stopping the processes`)
  failedItself = true
  stop('error')
})
process.stdout.on('error', () => stop('error'))
for (const service of services) {
  const port = metricsPorts.get(service.name)
  if (port !== undefined) say(service, `METRICS_PORT=${port}: http://${hostInUrl}:${port}/healthz and /metrics`)
  start(service)
}
