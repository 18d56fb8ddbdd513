import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, inject, it, onTestFinished } from 'vitest'
import { artworkKey } from '@letters/contracts'
import { closeDb, createDb, dropDatabase, signatures as signaturesTable } from '@letters/db'
import { readLetterDrawings } from '@letters/letters'
import { ADMIN_TOKEN } from '../support/context.js'
import { compact, pageContents, pdfText } from '../support/pdf.js'
import { freePort, processAlive, processTree, repositoryRoot } from '../support/processes.js'
import { until } from '../support/wait.js'

const run = promisify(execFile)

/** Linux only: the processes left behind are looked for in /proc. */
const onLinux = process.platform === 'linux'

/**
 * How long a stack may take to answer, from `npm start` in a fresh clone: the migrations, the
 * dashboard's first build (Vite), and four processes compiled by tsx, on two cores that other
 * test files keep busy.
 */
const STACK_READY_MS = 300_000

/**
 * A fresh clone of the committed HEAD, as a new user gets it: no build, no dist/, no var/, no
 * database. Its node_modules are the checkout's, hard-linked rather than installed: `npm ci` would
 * lay out the same tree from the same lockfile (patch-package included), but takes a minute or
 * more of CPU and the registry or its cache, while a hard-linked copy takes seconds and no space.
 * A copy, not a symlink: the workspace packages are relative links (node_modules/@letters/db →
 * ../../packages/db), which must point into the clone, not back into the checkout.
 */
async function freshClone(): Promise<string> {
  const parent = await mkdtemp(join(tmpdir(), 'letters-first-hour-'))
  const clone = join(parent, 'letters')
  await run('git', ['clone', '--quiet', repositoryRoot, clone], { timeout: 120_000 })
  const workspaces = ['.', 'test', 'bench', ...(await dirsUnder('packages')), ...(await dirsUnder('services'))]
  for (const workspace of workspaces) {
    const modules = join(repositoryRoot, workspace, 'node_modules')
    if (!(await stat(modules).catch(() => undefined))?.isDirectory()) continue
    await run('cp', ['-al', modules, join(clone, workspace, 'node_modules')], { timeout: 180_000 })
  }
  return clone
}

async function dirsUnder(folder: string): Promise<string[]> {
  const entries = await readdir(join(repositoryRoot, folder), { withFileTypes: true })
  return entries.filter((entry) => entry.isDirectory()).map((entry) => `${folder}/${entry.name}`)
}

interface Stack {
  name: string
  /** What was spawned: npm itself, or the terminal `script` runs it in. */
  spawned: ChildProcess
  /** Everything it wrote so far, stdout and stderr, without a terminal's colours and carriage returns. */
  output(): string
  exited: Promise<{ code: number | null; signal: string | null }>
  alive(): boolean
  /** The pid of `npm start` itself. */
  npmPid(): Promise<number>
  port: number
  databaseUrl: string
}

/** A terminal's colours (SGR) and line ends, taken out of what it shows. */
// eslint-disable-next-line no-control-regex
const plain = (text: string) => text.replace(/\u001b\[[0-9;]*m/g, '').replaceAll('\r\n', '\n')

/**
 * `npm start` in `clone` with what a second stack needs of its own (PORT, QUEUE_PREFIX,
 * DATABASE_URL: a database that does not exist yet, which `npm run migrate` creates) and an
 * ADMIN_TOKEN, in a shell's environment otherwise: nothing of the test runner's. In a terminal
 * (`script` gives it one, as a person's is) or with its output piped, as a log collector reads it.
 */
async function startStack(clone: string, name: string, { terminal }: { terminal: boolean }): Promise<Stack> {
  const port = await freePort()
  const databaseUrl = inject('databaseUrl').replace(/\/([^/]*)$/, (_, database: string) => `/${database}_first_${name}`)
  const env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    LANG: 'C.UTF-8',
    ...(terminal ? { TERM: 'xterm-256color' } : {}),
    DATABASE_URL: databaseUrl,
    REDIS_URL: inject('redisUrl'),
    PORT: String(port),
    ADMIN_TOKEN,
    QUEUE_PREFIX: `${inject('queuePrefix')}-first-${name}`,
    // The machine is shared with other test files: a gateway shedding load at the default 1 s of
    // event-loop delay would answer the pasted request 503, and warm-up proofs cost CPU the
    // other stack needs to start. Neither changes what a new user's first hour is.
    EVENT_LOOP_MAX_DELAY_MS: '60000',
    RENDER_WARM_UP: 'false',
    npm_config_update_notifier: 'false',
  }
  // `exec`: npm is the terminal's process itself, as when a person types the command.
  const [command, args] = terminal ? ['script', ['-qfec', 'exec npm start', '/dev/null']] : ['npm', ['start']]
  // A group of its own, for the cleanup to end whatever it left.
  const spawned = spawn(command, args, { cwd: clone, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  spawned.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
  spawned.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
  const exited = once(spawned, 'exit').then(([code, signal]) => ({ code: code as number | null, signal: signal as string | null }))
  return {
    name,
    spawned,
    output: () => plain(output),
    exited,
    alive: () => spawned.exitCode === null && spawned.signalCode === null,
    npmPid: async () => (terminal ? (await processTree(spawned.pid!)).find((proc) => proc.ppid === spawned.pid)!.pid : spawned.pid!),
    port,
    databaseUrl,
  }
}

const tail = (text: string) => (text.length > 6000 ? `…${text.slice(-6000)}` : text)

/** What `stack` printed that `pattern` finds, once it has; fails at once if it exited first. */
function printed(stack: Stack, pattern: RegExp, timeoutMs = STACK_READY_MS): Promise<RegExpMatchArray> {
  return until(
    `${stack.name} to print ${pattern}`,
    () => {
      const found = stack.output().match(pattern)
      if (found) return found
      if (!stack.alive()) throw new Error(`npm start (${stack.name}) exited before printing ${pattern}:\n${tail(stack.output())}`)
      return undefined
    },
    { timeoutMs, everyMs: 200 },
  )
}

/** The port each worker says it serves /healthz on, as the supervisor prints it under `npm start`. */
async function workerHealthUrls(stack: Stack): Promise<Record<string, string>> {
  const urls: Record<string, string> = {}
  for (const worker of ['address', 'production', 'webhooks']) {
    // Printed as the supervisor starts it: before the gateway's banner.
    const [, url] = await printed(stack, new RegExp(`^\\[${worker}\\]\\s+METRICS_PORT=\\d+: (http://\\S+/healthz)`, 'm'), 1000)
    urls[worker] = url!
  }
  return urls
}

const answers = (url: string) =>
  fetch(url, { signal: AbortSignal.timeout(10_000) }).then(
    (response) => response.status === 200 || undefined,
    () => undefined,
  )

/** SIGTERM to `npm start` by its pid (npm passes it to the supervisor, which stops the four); resolves with how it exited. */
async function stop(stack: Stack, timeoutMs = 90_000) {
  if (stack.alive()) process.kill(await stack.npmPid(), 'SIGTERM')
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`npm start (${stack.name}) did not exit within ${timeoutMs} ms of SIGTERM:\n${tail(stack.output())}`)), timeoutMs)
  })
  try {
    return await Promise.race([stack.exited, late])
  } finally {
    clearTimeout(timer)
  }
}

/** Whatever is left of a stack, killed: the test failed part-way. */
async function killLeftovers(stack: Stack) {
  if (!stack.alive()) return
  for (const proc of await processTree(stack.spawned.pid!)) {
    try {
      process.kill(proc.pid, 'SIGKILL')
    } catch {
      // Gone meanwhile.
    }
  }
  try {
    process.kill(-stack.spawned.pid!, 'SIGKILL')
  } catch {
    // Gone meanwhile.
  }
  await stack.exited
}

describe.skipIf(!onLinux)('a new user’s first hour', () => {
  it('runs two stacks of a fresh clone side by side with npm start, each worker healthy on the port printed, and the banner’s curl, pasted, gets a letter printed with the drawn signature, which the demo’s owner signed in with the printed password finds', async () => {
    const clone = await freshClone()
    const stacks: Stack[] = []
    onTestFinished(async () => {
      await Promise.all(stacks.map((stack) => stop(stack, 30_000).catch(() => killLeftovers(stack))))
      await Promise.all(stacks.map((stack) => dropDatabase(stack.databaseUrl)))
      await rm(join(clone, '..'), { recursive: true, force: true })
    })

    // One after the other, as a person opens a second terminal: the first start builds what a
    // fresh clone lacks (the dashboard), which two starts at once would both write.
    const first = await startStack(clone, 'a', { terminal: true })
    stacks.push(first)
    const banner = await printed(first, /^\[gateway\]\s+(curl -sS -X POST \S+\/single .*)$/m)
    const second = await startStack(clone, 'b', { terminal: false })
    stacks.push(second)
    await printed(second, /^\[gateway\]\s+curl -sS -X POST \S+\/single /m)

    // Every worker of both stacks answers /healthz 200 on the port the supervisor printed: six ports, none shared.
    const healthUrls = [...Object.values(await workerHealthUrls(first)), ...Object.values(await workerHealthUrls(second))]
    expect(new Set(healthUrls.map((url) => new URL(url).port)).size).toBe(6)
    expect(healthUrls.map((url) => new URL(url).port)).not.toContain(String(first.port))
    expect(healthUrls.map((url) => new URL(url).port)).not.toContain(String(second.port))
    for (const url of healthUrls) await until(`${url} to answer 200`, () => answers(url), { timeoutMs: STACK_READY_MS, everyMs: 250 })
    for (const stack of stacks) await until(`the gateway of ${stack.name} to answer`, () => answers(`http://127.0.0.1:${stack.port}/healthz`))
    // Once the gateway listens, just after its banner, the same three ports are printed again in one line.
    for (const stack of stacks) {
      const [, listed] = await printed(stack, /^\[gateway\]\s+The workers' \/healthz and \/metrics: (.*)$/m)
      const ports = Object.values(await workerHealthUrls(stack)).map((url) => new URL(url).origin)
      expect(listed!.split(', ').map((entry) => new URL(entry.split(' ')[1]!).origin)).toEqual(ports)
    }
    // Neither stack's workers were left without /metrics and /healthz.
    for (const stack of stacks) expect(stack.output()).not.toMatch(/metrics server not started/)

    // The banner's curl, run as pasted by the real curl in a shell. A curl configuration file
    // (CURL_HOME) adds the status after the body, without changing the pasted text.
    const curlText = banner[1]!
    const curlHome = join(clone, '..', 'curl-home')
    await mkdir(curlHome)
    await writeFile(join(curlHome, '.curlrc'), 'write-out = "\\n%{http_code}"\n')
    const { stdout } = await run('sh', ['-c', curlText], { env: { PATH: process.env.PATH, CURL_HOME: curlHome, HOME: curlHome }, timeout: 60_000 })
    const status = stdout.slice(stdout.lastIndexOf('\n') + 1)
    const answer = stdout.slice(0, stdout.lastIndexOf('\n'))
    expect(status, answer).toBe('200')
    const { cardId } = JSON.parse(answer) as { success: boolean; cardId: string }
    const pasted = JSON.parse(/-d '(.*)'$/.exec(curlText)![1]!) as { signatureId: string; senderId: string }
    const apiKey = /-H 'X-API-KEY: (\S+)'/.exec(curlText)![1]!

    // Printed by the first stack's production worker (its PDFs in the clone's var/spool).
    const letter = await until(
      `letter ${cardId} to be printed`,
      async () => {
        const response = await fetch(`http://127.0.0.1:${first.port}/cards/${cardId}`, { headers: { 'x-api-key': apiKey } })
        const body = (await response.json()) as { status: string; signatureId: string | null }
        return body.status === 'printed' ? body : undefined
      },
      { timeoutMs: 120_000, everyMs: 250 },
    )

    // The letter carries the demo's drawn signature: the one the seed created, fixed in its print spec…
    const db = createDb(first.databaseUrl, { max: 1 })
    try {
      const seeded = await db.select({ id: signaturesTable.id }).from(signaturesTable)
      expect(seeded.map((row) => row.id)).toEqual([pasted.signatureId])
      expect(letter.signatureId).toBe(pasted.signatureId)
      const [source] = await readLetterDrawings(db, [cardId])
      const signature = source!.printSpec!.signature!
      expect(signature.id).toBe(pasted.signatureId)
      const drawing = source!.artworks.get(artworkKey(signature.id, signature.artwork!.version))!.drawing!
      expect(drawing.kind).toBe('paths')
      const strokes = drawing.kind === 'paths' ? drawing.paths.length : 0
      expect(strokes).toBeGreaterThan(0)

      // …and drawn on the card: one stroke per path of it, in the letter's blue ink (#1b3a8c), in
      // place of the sender's typed name.
      const card = await readFile(join(clone, 'var', 'spool', `${cardId}.card.pdf`))
      const written = (await pageContents(card)).at(-1)!
      expect(written.match(/^S$/gm)).toHaveLength(strokes)
      expect(written).toMatch(/0\.10588\d* 0\.22745\d* 0\.54901\d* SCN/)
      const text = (await pdfText(card)).text
      expect(text).toContain(compact('Gracias por tu primer pedido'))
      expect(text).not.toContain(compact('Equipo de Demostración'))
    } finally {
      await closeDb(db)
    }

    // The dashboard's lines of the banner: its address opens the page, and the owner signs in
    // with the email and the password printed once (a POST from that address's origin, as the
    // sign-in form sends it), then reads the account's letters, the one just printed among them.
    const [, dashboardUrl] = await printed(first, /^\[gateway\]\s+Dashboard: (\S+)$/m)
    const [, email, password] = await printed(first, /^\[gateway\]\s+email (\S+), password \(shown once\): (\S+)$/m)
    const page = await fetch(dashboardUrl!)
    expect(page.status).toBe(200)
    expect(await page.text()).toContain('<html lang="es">')
    const { origin } = new URL(dashboardUrl!)
    const signIn = await fetch(`${origin}/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin },
      body: JSON.stringify({ email, password }),
    })
    expect(signIn.status, await signIn.clone().text()).toBe(200)
    expect(((await signIn.json()) as { user: { role: string } }).user.role).toBe('owner')
    const cookies = signIn.headers.getSetCookie().map((cookie) => cookie.split(';')[0]!)
    const listed = await fetch(`${origin}/cards`, { headers: { cookie: cookies.join('; ') } })
    expect(listed.status).toBe(200)
    expect(((await listed.json()) as { data: Array<{ id: string }> }).data.map((card) => card.id)).toContain(cardId)

    // Logs: in the terminal, pino-pretty's lines; piped, pino's JSON, as in production. At
    // info, the clients' requests and not the probes': the test's own polls of /healthz.
    expect(first.output()).toMatch(/^\[gateway\]\s+\[\d\d:\d\d:\d\d\.\d{3}\] INFO: Server listening at /m)
    expect(first.output()).not.toMatch(/^\[\w+\]\s+\{"level":/m)
    expect(second.output()).toMatch(/^\[gateway\]\s+\{"level":30,.*"msg":"Server listening at /m)
    expect(first.output()).toMatch(/"url":"\/single"/)
    for (const stack of stacks) expect(stack.output()).not.toMatch(/"url":"\/healthz"/)

    // SIGTERM by pid: each stack's four processes stop as told, and npm start exits 0.
    const pids = (await Promise.all(stacks.map((stack) => processTree(stack.spawned.pid!)))).flat().map((proc) => proc.pid)
    for (const stack of stacks) {
      expect(await stop(stack), tail(stack.output())).toEqual({ code: 0, signal: null })
      expect(stack.output().match(/src\/main\.ts exited with (code 0|signal SIGTERM)\n/g), tail(stack.output())).toHaveLength(4)
      expect(stack.output()).not.toMatch(/starting it again/)
    }
    await until('every process of both stacks to be gone', async () => (await Promise.all(pids.map(processAlive))).every((alive) => !alive) || undefined, {
      timeoutMs: 15_000,
    })
  }, 900_000)
})
