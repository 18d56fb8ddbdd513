/**
 * An 18-month history for a benchmark database: accounts, their designs and campaigns, letters at
 * every stage of their lives, and everything the pipeline writes beside them (letter_events, the
 * ledger, the outbox, print handoffs and batches, webhook deliveries, GET /events, Idempotency-Keys),
 * as the service itself would have left them. Written with set-based SQL only (INSERT … SELECT over
 * generate_series), so that a million letters take minutes, not hours.
 *
 * Deterministic: every choice is a hash of a row's number (`history_fill.u`), and every id an md5
 * of its kind and number (`history_fill.hid`), so two fills of the same size have the same shape;
 * only the dates move with the clock. The database must be empty and fully migrated. The big
 * statements are split in two, one part on each of two connections: a 2-core machine uses both.
 */
import { performance } from 'node:perf_hooks'
import type postgres from 'postgres'
import { loadConfig } from '@letters/config'
import { EVENT_RETENTION_DAYS, fontNames, ledgerReasons, publicApi } from '@letters/contracts'
import { letterStatuses, outboxTargetSql } from '@letters/db'
import { RELEASED_DETAIL, TEST_MAILED_DETAIL } from '@letters/pipeline'

export interface HistoryShape {
  letters: number
  accounts: number
  bigAccountLetters: number
  campaigns: number
  webhookEndpoints: number
  months: number
}

const MONTHS = 18
const MAX_ACCOUNTS = 200
/** Letters per account before the 200 accounts are reached: a small fill has fewer accounts, never fewer than 2. */
const LETTERS_PER_ACCOUNT = 100
/** The share of all letters held by the one big account (97k of 1M). */
const BIG_ACCOUNT_SHARE = 0.097
/** The big account's campaigns: 45 of ordinary size and these few, each a handful of letters sent in one go. */
const BIG_ACCOUNT_CAMPAIGNS = 45
const TINY_CAMPAIGNS = [
  { letters: 3, at: 0.15 },
  { letters: 5, at: 0.35 },
  { letters: 8, at: 0.55 },
  { letters: 2, at: 0.75 },
  { letters: 6, at: 0.9 },
]
/** Distinct recipients the letters are drawn from (their addresses, names and checks are built once). */
const RECIPIENT_POOL = 50_000

// Shares of letters. A letter's outcome is drawn once: cancelled, failed, reprinted or not.
const TEST_SHARE = 0.03
const SCHEDULED_SHARE = 0.05
const CAMPAIGN_SHARE = 0.55
const CANCELLED_SHARE = 0.015
const FAILED_SHARE = 0.002
const REPRINTED_SHARE = 0.005
/** Live letters printed through a batch (PRINTER=batch) rather than one by one. */
const BATCHED_SHARE = 0.2
/** The service's defaults: the history is the one a service run with them leaves. */
const defaults = loadConfig({})
/** A batch's most letters (BATCH_MAX_LETTERS). */
const BATCH_MAX_LETTERS = defaults.batch.maxLetters

/** PERSONAL_DATA_RETENTION_MS in days (90): an erasable letter is erased this long after its last change. */
const PERSONAL_DATA_RETENTION_DAYS = defaults.personalDataRetentionMs / 86_400_000
/** How long a key is remembered, and the hour past it the key cleanup (purgeExpiredIdempotencyKeys) waits. */
const IDEMPOTENCY_KEPT_HOURS = publicApi.IDEMPOTENCY_TTL_HOURS + 1
/** WEBHOOK_RETRY_SCHEDULE's default, as the delay before each attempt after the first (ms, cumulative); 8 attempts in all. */
const RETRY_CUMULATIVE_MS = defaults.webhooks.retryScheduleMs.reduce((sums, delay) => [...sums, sums.at(-1)! + delay], [0])
/** WEBHOOK_TIMEOUT_MS. */
const WEBHOOK_TIMEOUT_MS = defaults.webhooks.timeoutMs

const allEventTypes = letterStatuses.map((status) => `letter.${status}`)

interface CardPlan {
  name: string
  format: 'A6' | 'A5'
  production: 'printed' | 'preprinted'
  stockCode: string
}
interface EnvelopePlan {
  name: string
  format: 'C6' | 'C5'
  stockCode: string
  paperColor: string
}
/** What a letter is made with: a campaign (`campaign` is its number in the account), or one of the account's ways of sending single letters. */
interface ChoicePlan {
  choice: number
  campaign: number | null
  name: string | null
  card: number
  envelope: number
  sender: number
  signature: boolean
  font: string | null
  template: string
}
interface EndpointPlan {
  endpoint: number
  events: string[]
  /** The share of its deliveries that fail every attempt. */
  failRate: number
}
interface AccountPlan {
  account: number
  name: string
  cards: CardPlan[]
  envelopes: EnvelopePlan[]
  senders: number
  /** Campaigns of ordinary size; the tiny ones follow them (the big account only). */
  campaigns: number
  tinyCampaigns: number
  singles: number
  choices: ChoicePlan[]
  endpoints: EndpointPlan[]
}

/** A small deterministic generator (mulberry32) for the plan of the accounts: the same fill, the same accounts. */
function seeded(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const BUSINESSES = [
  'Floristería',
  'Librería',
  'Papelería',
  'Bodega',
  'Óptica',
  'Clínica Dental',
  'Inmobiliaria',
  'Academia',
  'Joyería',
  'Pastelería',
  'Gestoría',
  'Hotel',
  'Gimnasio',
  'Vinoteca',
  'Estudio de Yoga',
  'Tienda de Bicis',
  'Herboristería',
  'Galería',
  'Taller',
  'Perfumería',
]
const BRANDS = ['Luna', 'El Olivo', 'Aurora', 'La Encina', 'Mar Azul', 'Sol de Mayo', 'Alameda', 'La Brújula', 'Candela', 'El Faro']

const CAMPAIGN_THEMES = [
  'Navidad',
  'Aniversario',
  'Bienvenida',
  'Rebajas de enero',
  'San Valentín',
  'Vuelta al cole',
  'Verano',
  'Black Friday',
  'Gracias',
  'Día de la Madre',
]
const PHRASES = [
  'muchas gracias por confiar en nosotros un año más. Hemos preparado cada detalle con el mismo cuidado de siempre y esperamos que lo disfrutes tanto como nosotros al hacerlo.',
  'queríamos escribirte de nuestro puño y letra para darte la bienvenida. Si necesitas cualquier cosa, pásate por la tienda o escríbenos: estaremos encantados de ayudarte.',
  'se acercan unas fechas muy especiales y no queríamos dejar pasar la ocasión de desearte lo mejor a ti y a los tuyos. Te esperamos pronto con alguna sorpresa.',
  'ha pasado un año desde tu primera visita y queríamos agradecértelo. Como regalo, en tu próxima compra tienes un pequeño detalle esperándote en el mostrador.',
  'gracias por tu pedido. Lo hemos preparado a mano y esperamos que llegue en perfecto estado; si algo no fuera como esperabas, dínoslo y lo arreglamos enseguida.',
]

/** The accounts of a fill of `letters`: the same for the same count. Account 1 is the big one. */
function planAccounts(letters: number): AccountPlan[] {
  const count = Math.min(MAX_ACCOUNTS, Math.max(2, Math.floor(letters / LETTERS_PER_ACCOUNT)))
  return Array.from({ length: count }, (_, index) => planAccount(index + 1))
}

function planAccount(account: number): AccountPlan {
  const random = seeded(account * 7919 + 17)
  const big = account === 1
  const pick = <T>(values: readonly T[]) => values[Math.floor(random() * values.length)]!
  const name = big
    ? 'Grupo Editorial Mediterráneo S.A.'
    : `${BUSINESSES[(account - 2) % BUSINESSES.length]} ${BRANDS[Math.floor((account - 2) / BUSINESSES.length) % BRANDS.length]}`
  const cards: CardPlan[] = [
    { name: 'Tarjeta clásica', format: 'A6', production: 'printed', stockCode: 'CARTULINA-A6-350' },
    account % 5 === 0
      ? { name: 'Tarjeta con logotipo impreso', format: 'A6', production: 'preprinted', stockCode: `PRE-A6-${String(account).padStart(3, '0')}` }
      : { name: 'Tarjeta verjurada', format: 'A6', production: 'printed', stockCode: 'CARTULINA-A6-300-VERJURADA' },
  ]
  const envelopes: EnvelopePlan[] = [
    { name: 'Sobre blanco', format: 'C6', stockCode: 'SOBRE-C6-BLANCO', paperColor: '#FFFFFF' },
    { name: 'Sobre kraft', format: 'C6', stockCode: 'SOBRE-C6-KRAFT', paperColor: '#C8A27A' },
  ]
  if (big) {
    cards.push({ name: 'Tarjeta grande', format: 'A5', production: 'printed', stockCode: 'CARTULINA-A5-350' })
    cards.push({ name: 'Tarjeta de Navidad preimpresa', format: 'A6', production: 'preprinted', stockCode: 'PRE-A6-MED-NAVIDAD' })
    envelopes.push({ name: 'Sobre grande', format: 'C5', stockCode: 'SOBRE-C5-BLANCO', paperColor: '#FFFFFF' })
  }
  // An A5 card goes in the C5 envelope; the others in one of the C6 ones.
  const envelopeFor = (card: number, turn: number) => (cards[card - 1]!.format === 'A5' ? 3 : (turn % 2) + 1)
  const senders = big ? 2 : 1
  const campaigns = big ? BIG_ACCOUNT_CAMPAIGNS : 2 + Math.floor(random() * 4)
  const tinyCampaigns = big ? TINY_CAMPAIGNS.length : 0
  const choices: ChoicePlan[] = []
  for (let k = 1; k <= campaigns + tinyCampaigns; k++) {
    const card = ((k - 1) % cards.length) + 1
    const theme = CAMPAIGN_THEMES[(k + account) % CAMPAIGN_THEMES.length]!
    choices.push({
      choice: k,
      campaign: k,
      name: k > campaigns ? `${theme}: clientes VIP ${k - campaigns}` : `${theme} ${2025 + (k % 2)}`,
      card,
      envelope: envelopeFor(card, k),
      sender: ((k - 1) % senders) + 1,
      signature: k % 2 === 1,
      font: k % 3 === 0 ? null : fontNames[k % fontNames.length]!,
      template: `Hola {{nombre}}, ${PHRASES[(k + account) % PHRASES.length]}`,
    })
  }
  // Single letters: each card, with the account's signature and without.
  const singles = cards.length * 2
  for (let v = 1; v <= singles; v++) {
    const card = ((v - 1) % cards.length) + 1
    choices.push({
      choice: 1000 + v,
      campaign: null,
      name: null,
      card,
      envelope: envelopeFor(card, v),
      sender: ((v - 1) % senders) + 1,
      signature: v <= cards.length,
      font: pick([...fontNames, null]),
      template: `Hola, {{nombre}}: ${PHRASES[(v + account * 3) % PHRASES.length]}`,
    })
  }
  const endpoints: EndpointPlan[] = []
  if (big) {
    // Everything, on the integration that mirrors every letter; the mailing report; the support desk.
    endpoints.push({ endpoint: 1, events: allEventTypes, failRate: 0.002 })
    endpoints.push({ endpoint: 2, events: ['letter.mailed', 'letter.address_rejected'], failRate: 0.01 })
    endpoints.push({ endpoint: 3, events: ['letter.address_rejected', 'letter.cancelled', 'letter.failed'], failRate: 0 })
  } else if (random() < 0.5) {
    const draw = random()
    const howMany = draw < 0.6 ? 1 : draw < 0.9 ? 2 : 3
    const flaky = random() < 0.125
    const patterns = [allEventTypes, ['letter.mailed', 'letter.address_rejected'], ['letter.printed', 'letter.mailed']]
    for (let endpoint = 1; endpoint <= howMany; endpoint++) {
      const events =
        endpoint === 1
          ? patterns[random() < 0.2 ? 0 : random() < 0.5 ? 1 : 2]!
          : pick([['letter.mailed'], ['letter.address_rejected', 'letter.cancelled', 'letter.failed']])
      endpoints.push({ endpoint, events, failRate: flaky && endpoint === 1 ? 0.05 : 0.003 })
    }
  }
  return { account, name, cards, envelopes, senders, campaigns, tinyCampaigns, singles, choices, endpoints }
}

/** The shape of a fill of `letters`, before it is made: what fillHistory writes and returns. */
export function historyShape(letters: number): HistoryShape {
  if (!Number.isSafeInteger(letters) || letters < 1) throw new RangeError(`a history holds at least one letter, got ${letters}`)
  const plans = planAccounts(letters)
  return {
    letters,
    accounts: plans.length,
    bigAccountLetters: Math.max(1, Math.round(letters * BIG_ACCOUNT_SHARE)),
    campaigns: plans.reduce((sum, plan) => sum + plan.campaigns + plan.tinyCampaigns, 0),
    webhookEndpoints: plans.reduce((sum, plan) => sum + plan.endpoints.length, 0),
    months: MONTHS,
  }
}

type SqlValue = string | number | boolean | null | readonly string[]

/** A constant of ours as an SQL literal. */
function literal(value: SqlValue): string {
  if (value === null) return 'NULL'
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new RangeError(`not a finite number: ${value}`)
    return String(value)
  }
  if (typeof value === 'boolean') return value ? 'true' : 'false'
  if (typeof value === 'string') return `'${value.replaceAll("'", "''")}'`
  return `ARRAY[${value.map(literal).join(', ')}]::text[]`
}

const valuesList = (rows: readonly SqlValue[][]) => `VALUES ${rows.map((row) => `(${row.map(literal).join(', ')})`).join(',\n  ')}`

/** Spanish cities (and a few abroad) recipients live in: country, city, province, the start of their postal codes, the country's Spanish name. */
const CITIES: Array<[string, string, string | null, string, string]> = [
  ['ES', 'Madrid', 'Madrid', '28', 'España'],
  ['ES', 'Barcelona', 'Barcelona', '08', 'España'],
  ['ES', 'Valencia', 'Valencia', '46', 'España'],
  ['ES', 'Sevilla', 'Sevilla', '41', 'España'],
  ['ES', 'Zaragoza', 'Zaragoza', '50', 'España'],
  ['ES', 'Málaga', 'Málaga', '29', 'España'],
  ['ES', 'Murcia', 'Murcia', '30', 'España'],
  ['ES', 'Palma', 'Illes Balears', '07', 'España'],
  ['ES', 'Bilbao', 'Bizkaia', '48', 'España'],
  ['ES', 'Alicante', 'Alicante', '03', 'España'],
  ['ES', 'Córdoba', 'Córdoba', '14', 'España'],
  ['ES', 'Valladolid', 'Valladolid', '47', 'España'],
  ['ES', 'Vigo', 'Pontevedra', '36', 'España'],
  ['ES', 'Gijón', 'Asturias', '33', 'España'],
  ['ES', 'Granada', 'Granada', '18', 'España'],
  ['ES', 'A Coruña', 'A Coruña', '15', 'España'],
  ['ES', 'Vitoria-Gasteiz', 'Araba/Álava', '01', 'España'],
  ['ES', 'Pamplona', 'Navarra', '31', 'España'],
  ['ES', 'Santander', 'Cantabria', '39', 'España'],
  ['ES', 'Salamanca', 'Salamanca', '37', 'España'],
  ['PT', 'Lisboa', null, '1000-', 'Portugal'],
  ['PT', 'Porto', null, '4000-', 'Portugal'],
  ['FR', 'Paris', null, '75', 'Francia'],
  ['FR', 'Lyon', null, '69', 'Francia'],
  ['DE', 'Berlin', null, '10', 'Alemania'],
  ['DE', 'München', null, '80', 'Alemania'],
  ['IT', 'Roma', null, '00', 'Italia'],
  ['IT', 'Milano', null, '20', 'Italia'],
]
const FIRST_NAMES =
  'Lucía María Carmen Ana Laura Marta Elena Paula Sara Cristina Isabel Julia Nuria Rocío Irene Antonio José Manuel Francisco David Javier Daniel Carlos Miguel Alejandro Pablo Sergio Jorge Alberto Raúl'.split(
    ' ',
  )
const SURNAMES =
  'García Rodríguez González Fernández López Martínez Sánchez Pérez Gómez Martín Jiménez Ruiz Hernández Díaz Moreno Muñoz Álvarez Romero Alonso Gutiérrez Navarro Torres Domínguez Vázquez Ramos Gil Ramírez Serrano Blanco Molina'.split(
    ' ',
  )
const STREETS =
  'Calle Mayor|Calle Real|Avenida de la Constitución|Calle del Carmen|Plaza de España|Calle San Juan|Paseo de la Castellana|Calle Gran Vía|Calle de Alcalá|Avenida de América|Calle del Sol|Calle Nueva|Calle de la Iglesia|Ronda de Valencia|Calle Cervantes|Calle Goya'.split(
    '|',
  )
const COMPANIES = [
  'Talleres Ruiz S.L.',
  'Construcciones Alameda S.A.',
  'Asesoría Fiscal Norte',
  'Distribuciones Levante S.L.',
  'Clínica Vetusta',
  'Hostal Las Palmeras',
]

/**
 * The fill's own tables and functions (its plan of the accounts, the recipients, every letter's
 * timeline, the event bodies), in a schema of their own that both connections see, unlogged, and
 * dropped at the end. The connections' search_path finds the tables; the functions are named whole.
 */
const STAGING = 'history_fill'

/** One statement of the fill, and how its progress reads: rows written (`counted`, the default) or only the time. */
interface Step {
  label: string
  /** Run in order; the step's rows are the most any of them wrote. */
  sql: string | string[]
  counted?: boolean
}

/** Steps run one after another on one connection. */
type Task = Step[]

/**
 * The fill's connections (two when the pool allows, one per core of the machine it was made for),
 * and the way its statements run on them: alone, or as tasks shared out, each connection taking the
 * next task as soon as it is done with one.
 */
class Lanes {
  constructor(
    private readonly connections: postgres.ReservedSql[],
    private readonly progress: (text: string) => void,
  ) {}

  get count(): number {
    return this.connections.length
  }

  /** Runs the same statement on every connection: the sessions' settings. */
  async everywhere(text: string): Promise<void> {
    await Promise.all(this.connections.map((connection) => connection.unsafe(text)))
  }

  /** The rows of a query of the catalog, on the first connection. */
  async query<Row>(text: string): Promise<Row[]> {
    return [...(await this.connections[0]!.unsafe(text))] as Row[]
  }

  /** Runs `task` on the first connection. */
  async run(task: Task | Step): Promise<void> {
    await this.execute(this.connections[0]!, Array.isArray(task) ? task : [task], true)
  }

  /**
   * Runs the tasks on all connections at once, the longest first (give them in that order). With
   * `summary`, the steps are not reported one by one: one line tells how many ran and for how long.
   */
  async all(tasks: Task[], summary?: string): Promise<void> {
    const began = performance.now()
    const queue = [...tasks]
    let failed = false
    const results = await Promise.allSettled(
      this.connections.map(async (connection) => {
        for (let task = queue.shift(); task && !failed; task = queue.shift()) {
          await this.execute(connection, task, summary === undefined).catch((error: unknown) => {
            failed = true
            throw error
          })
        }
      }),
    )
    const rejected = results.find((result) => result.status === 'rejected')
    if (rejected) throw rejected.reason
    if (summary !== undefined) this.progress(`${summary}: ${tasks.length} in ${seconds(began)}`)
  }

  /**
   * A statement split in one part per connection, by the remainder of a row number: `part(where)`
   * writes the statement of the rows for which `where(number)` holds.
   */
  split(label: string, part: (where: (number: string) => string) => string): Task[] {
    if (this.count === 1) return [[{ label, sql: part(() => 'true') }]]
    return Array.from({ length: this.count }, (_, index) => [
      { label: `${label} (part ${index + 1} of ${this.count})`, sql: part((number) => `(${number}) % ${this.count} = ${index}`) },
    ])
  }

  private async execute(connection: postgres.ReservedSql, task: Task, report: boolean): Promise<void> {
    for (const step of task) {
      const began = performance.now()
      let rows: number | undefined
      for (const text of Array.isArray(step.sql) ? step.sql : [step.sql]) {
        // Raw SQL: set-based generation (INSERT … SELECT over generate_series and the fill's own
        // tables, window functions, data-dependent fan-out) that the query builder cannot express.
        const result = await connection.unsafe(text)
        rows = Math.max(rows ?? 0, result.count ?? 0)
      }
      if (!report) continue
      this.progress(
        step.counted === false ? `${step.label} in ${seconds(began)}` : `${step.label}: ${(rows ?? 0).toLocaleString('en')} rows in ${seconds(began)}`,
      )
    }
  }
}

const seconds = (began: number) => `${((performance.now() - began) / 1000).toFixed(1)} s`

/**
 * Fills the empty, migrated database of `sql` with `letters` letters' 18 months of history, and
 * ANALYZEs it. Uses two of the pool's connections when it may (one otherwise). `progress` hears of
 * each table as it is written. Returns the shape it made.
 */
export async function fillHistory(sql: postgres.Sql, letters: number, progress: (text: string) => void): Promise<HistoryShape> {
  const shape = historyShape(letters)
  const plans = planAccounts(letters)
  const connections = [await sql.reserve()]
  try {
    if (sql.options.max >= 2) connections.push(await sql.reserve())
    const [existing] = await connections[0]!<Array<{ accounts: number; letters: number }>>`
      SELECT (SELECT count(*) FROM accounts)::int AS accounts, (SELECT count(*) FROM letters)::int AS letters`
    if (!existing || existing.accounts > 0 || existing.letters > 0) throw new Error('fillHistory needs an empty database: it has accounts or letters already')
    const [clock] = await connections[0]!<Array<{ now: string; span: number }>>`
      SELECT to_char(date_trunc('second', now()) AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS+00') AS now,
        extract(epoch FROM date_trunc('second', now()) - (date_trunc('second', now()) - make_interval(months => ${MONTHS})))::float8 AS span`
    await fill(new Lanes(connections, progress), plans, shape, clock!.now, clock!.span)
  } finally {
    await connections[0]!.unsafe(`DROP SCHEMA IF EXISTS ${STAGING} CASCADE`).catch(() => {})
    for (const connection of connections) {
      await connection.unsafe('RESET ALL').catch(() => {})
      connection.release()
    }
  }
  return shape
}

/** The instants and sizes every statement of a fill shares. */
interface Fill {
  plans: AccountPlan[]
  /** Letters, and the big account's. */
  N: number
  B: number
  /** Recipients drawn from. */
  POOL: number
  /** The fill's now, its start 18 months before, and the seconds between them, as SQL. */
  NOW: string
  START: string
  SPAN: number
}

/** `expression` seconds, as an SQL interval. */
const secs = (expression: string) => `(${expression}) * interval '1 second'`

async function fill(lanes: Lanes, plans: AccountPlan[], shape: HistoryShape, now: string, span: number): Promise<void> {
  const NOW = `'${now}'::timestamptz`
  const f: Fill = {
    plans,
    N: shape.letters,
    B: shape.bigAccountLetters,
    POOL: Math.min(shape.letters, RECIPIENT_POOL),
    NOW,
    START: `(${NOW} - interval '${MONTHS} months')`,
    SPAN: span,
  }

  await lanes.everywhere(
    `SET TimeZone = 'UTC'; SET work_mem = '512MB'; SET synchronous_commit = off; SET jit = off; SET max_parallel_workers_per_gather = 0; SET search_path = ${STAGING}, public`,
  )
  // Every row is made to hold (each id is one the fill made, of a row it wrote): the foreign keys'
  // per-row checks are skipped where the role may (a superuser's session_replication_role), and
  // each key is checked over its whole table at the end instead (foreignKeyChecks). Elsewhere the
  // steps' order keeps each row's parents written before it.
  const unchecked = await lanes
    .everywhere('SET session_replication_role = replica')
    .then(() => true)
    .catch(() => false)
  // Gigabytes of index pages, each written whole after every checkpoint: compressed where the role may.
  await lanes.everywhere('SET wal_compression = on').catch(() => {})
  await lanes.run({ label: 'staging schema', sql: stagingSchema(), counted: false })

  await lanes.all([accountsAndDesigns(f), recipientPool(f)])
  await letterTimelines(lanes, f)
  await lanes.all(lanes.split('letters', (where) => letters(where)))
  await lanes.run({ label: 'letter events (table)', sql: `CREATE UNLOGGED TABLE ev AS ${eventBodies(f, () => 'false')}`, counted: false })
  await lanes.all([
    ...lanes.split('letter events (bodies)', (where) => `INSERT INTO ev ${eventBodies(f, where)}`),
    ...lanes.split('letter_events', (where) => letterEvents(where)),
    ...lanes.split('outbox (letters)', (where) => outboxJobs(f, where)),
    ...lanes.split('ledger_entries', (where) => ledger(f, where)),
    [{ label: 'print_handoffs', sql: printHandoffs() }],
    printBatches(),
    [{ label: 'idempotency_keys', sql: idempotencyKeys(f) }],
  ])
  await lanes.run([
    { label: 'letter events (analyzed)', sql: 'ANALYZE ev', counted: false },
    // The ids were given explicitly (each letter's in the order of its changes): the sequence goes on after them.
    {
      label: 'letter_events (sequence)',
      sql: `SELECT setval(pg_get_serial_sequence('letter_events', 'id'), (SELECT max(id) FROM letter_events))`,
      counted: false,
    },
  ])
  await lanes.all([
    ...lanes.split('webhook_events', (where) => webhookEvents(f, where)),
    [{ label: 'events', sql: events(f) }],
    [
      {
        label: 'accounts (balances)',
        sql: `UPDATE accounts a SET balance = l.total FROM (SELECT account_id, sum(amount)::int AS total FROM ledger_entries GROUP BY 1) l WHERE l.account_id = a.id`,
      },
    ],
  ])
  await lanes.all(lanes.split('webhook_attempts', (where) => webhookAttempts(where)))
  await lanes.all(lanes.split('outbox (webhook deliveries)', (where) => webhookDeliveryJobs(where)))
  if (unchecked) await lanes.all(await foreignKeyChecks(lanes), 'foreign keys checked')
  // The largest first: the two connections share them out.
  const tables = await lanes.query<{ name: string }>(
    `SELECT quote_ident(relname) AS name FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relkind = 'r' ORDER BY pg_relation_size(oid) DESC`,
  )
  await lanes.all(
    tables.map((table) => [{ label: `ANALYZE ${table.name}`, sql: `ANALYZE public.${table.name}`, counted: false }]),
    'ANALYZE (tables)',
  )
}

/** The staging schema and its functions: a uniform draw in [0, 1) for row n and stream `salt`; an id of a kind and number (v4-shaped); an instant as the API writes it. */
function stagingSchema(): string[] {
  return [
    `DROP SCHEMA IF EXISTS ${STAGING} CASCADE`,
    `CREATE SCHEMA ${STAGING}`,
    `CREATE FUNCTION ${STAGING}.u(n bigint, salt int) RETURNS float8 LANGUAGE sql IMMUTABLE PARALLEL SAFE
      AS $$ SELECT (hashint8extended(n, salt) & 2147483647)::float8 / 2147483648 $$`,
    `CREATE FUNCTION ${STAGING}.hid(kind text, n bigint) RETURNS uuid LANGUAGE sql IMMUTABLE PARALLEL SAFE
      AS $$ SELECT overlay(overlay(md5(kind || ':' || n) PLACING '4' FROM 13) PLACING '8' FROM 17)::uuid $$`,
    `CREATE FUNCTION ${STAGING}.iso(t timestamptz) RETURNS text LANGUAGE sql STABLE PARALLEL SAFE
      AS $$ SELECT to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') $$`,
    // A webhook delivery's attempt i (from 1): after the retry schedule's delays, each within ±10%,
    // and room for the attempts before it to have taken up to the timeout.
    `CREATE FUNCTION ${STAGING}.attempt_at(created timestamptz, w bigint, i int) RETURNS timestamptz LANGUAGE sql STABLE PARALLEL SAFE
      AS $$ SELECT created + ((300 + ('{${RETRY_CUMULATIVE_MS.join(',')}}'::float8[])[i] * (0.9 + 0.2 * ${STAGING}.u(w, 100 + i))
        + (i - 1) * ${WEBHOOK_TIMEOUT_MS}) * interval '1 millisecond') $$`,
    // How long attempt i took: a quick 2xx when it succeeded, else a timeout, a refused connection or a slow 5xx (see webhookAttempts).
    `CREATE FUNCTION ${STAGING}.attempt_ms(w bigint, i int, ok boolean) RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE
      AS $$ SELECT CASE WHEN ok THEN 40 + floor(900 * ${STAGING}.u(w, 200 + i) ^ 3)::int
                        WHEN ${STAGING}.u(w, 300 + i) < 0.3 THEN ${WEBHOOK_TIMEOUT_MS}
                        WHEN ${STAGING}.u(w, 300 + i) < 0.5 THEN 3 + floor(80 * ${STAGING}.u(w, 200 + i))::int
                        ELSE 100 + floor(2900 * ${STAGING}.u(w, 200 + i))::int END $$`,
  ]
}

const u = (n: string, salt: number | string) => `${STAGING}.u(${n}, ${salt})`
const hid = (kind: string, n: string) => `${STAGING}.hid(${kind}, ${n})`
const iso = (instant: string) => `${STAGING}.iso(${instant})`

/** Accounts and what each has before its first letter: keys, designs and their artwork, senders, signatures, campaigns, webhook endpoints; and the ways each makes a letter (hc). */
function accountsAndDesigns({ plans, START }: Fill): Task {
  const subscribed = (plan: AccountPlan) => [...new Set(plan.endpoints.flatMap((endpoint) => endpoint.events))]
  const cardRows = plans.flatMap((plan) => plan.cards.map((card, index) => [plan.account, index + 1, card.name, card.format, card.production, card.stockCode]))
  const envelopeRows = plans.flatMap((plan) =>
    plan.envelopes.map((envelope, index) => [plan.account, index + 1, envelope.name, envelope.format, envelope.stockCode, envelope.paperColor]),
  )
  const campaignRows = plans.flatMap((plan) =>
    plan.choices
      .filter((choice) => choice.campaign !== null)
      .map((choice) => [
        plan.account,
        choice.campaign,
        choice.name,
        choice.card,
        choice.envelope,
        choice.sender,
        choice.signature,
        choice.font,
        choice.template,
      ]),
  )
  const endpointRows = plans.flatMap((plan) => plan.endpoints.map((endpoint) => [plan.account, endpoint.endpoint, endpoint.events, endpoint.failRate]))
  const choiceRows = plans.flatMap((plan) =>
    plan.choices.map((choice) => [
      plan.account,
      choice.choice,
      choice.campaign,
      choice.card,
      choice.envelope,
      choice.sender,
      choice.signature,
      choice.font,
      choice.template,
    ]),
  )
  return [
    {
      label: 'accounts (plan)',
      sql: [
        `CREATE UNLOGGED TABLE ha AS
        SELECT v.a::int AS a, ${hid("'account'", 'v.a')} AS id, v.name::text AS name, v.campaigns::int AS campaigns, v.singles::int AS singles,
          v.senders::int AS senders, v.subscribed::text[] AS subscribed,
          ${START} - make_interval(days => 2 + floor(20 * ${u('v.a', 1)})::int, secs => floor(86400 * ${u('v.a', 2)})) AS created_at
        FROM (${valuesList(plans.map((plan) => [plan.account, plan.name, plan.campaigns, plan.singles, plan.senders, subscribed(plan)]))})
          AS v(a, name, campaigns, singles, senders, subscribed)`,
        'ANALYZE ha',
      ],
    },
    { label: 'accounts', sql: `INSERT INTO accounts (id, name, balance, created_at) SELECT id, name, 0, created_at FROM ha ORDER BY a` },
    {
      label: 'api_keys',
      sql: `
      INSERT INTO api_keys (id, account_id, key_hash, display_prefix, livemode, created_at)
      SELECT ${hid("'api-key-' || m.mode", 'ha.a')}, ha.id, encode(sha256(convert_to(m.prefix || md5('key:' || m.mode || ':' || ha.a), 'UTF8')), 'hex'),
        m.prefix || substr(md5('key:' || m.mode || ':' || ha.a), 1, 6), m.livemode, ha.created_at + interval '5 minutes'
      FROM ha CROSS JOIN (VALUES ('live', 'lk_live_', true), ('test', 'lk_test_', false)) AS m(mode, prefix, livemode)`,
    },
    {
      label: 'card_designs',
      sql: `
      INSERT INTO card_designs (id, account_id, name, format, production, stock_code, created_at)
      SELECT ${hid("'card'", 'v.a * 100 + v.k')}, ha.id, v.name, v.format, v.production, v.stock, ha.created_at + v.k * interval '10 minutes'
      FROM (${valuesList(cardRows)}) AS v(a, k, name, format, production, stock) JOIN ha ON ha.a = v.a`,
    },
    {
      label: 'envelope_designs',
      sql: `
      INSERT INTO envelope_designs (id, account_id, name, format, stock_code, paper_color, created_at)
      SELECT ${hid("'envelope'", 'v.a * 100 + v.k')}, ha.id, v.name, v.format, v.stock, v.color, ha.created_at + v.k * interval '12 minutes'
      FROM (${valuesList(envelopeRows)}) AS v(a, k, name, format, stock, color) JOIN ha ON ha.a = v.a`,
    },
    {
      label: 'senders',
      sql: `
      INSERT INTO senders (id, account_id, name, return_address, created_at)
      SELECT ${hid("'sender'", 'ha.a * 100 + s')}, ha.id, CASE WHEN s = 1 THEN ha.name ELSE ha.name || ' (atención al cliente)' END,
        jsonb_build_object('name', ha.name, 'company', NULL, 'address', 'Calle de la Industria ' || (1 + ha.a % 90), 'zip', '280' || lpad((ha.a % 60)::text, 2, '0'),
          'city', 'Madrid', 'province', 'Madrid', 'country', 'ES', 'countryName', 'España'),
        ha.created_at + s * interval '15 minutes'
      FROM ha CROSS JOIN LATERAL generate_series(1, ha.senders) AS s`,
    },
    {
      label: 'signatures',
      sql: `INSERT INTO signatures (id, account_id, name, created_at) SELECT ${hid("'signature'", 'ha.a')}, ha.id, 'Firma de ' || ha.name, ha.created_at + interval '20 minutes' FROM ha`,
    },
    // A front for every printed card, a logo for every envelope, a drawing for every signature:
    // small SVGs, so that each letter's print spec names real artwork versions.
    {
      label: 'artworks',
      sql: `
      INSERT INTO artworks (owner_id, version, account_id, use, format, content_type, bytes, sha256, original, print, preview, drawing, created_at)
      SELECT owner_id, 1, account_id, use, format, 'image/svg+xml', octet_length(svg), encode(sha256(svg), 'hex'), svg, svg,
        decode('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8/5+hHgAHggJ/PchI7wAAAABJRU5ErkJggg==', 'base64'), drawing, created_at
      FROM (
        SELECT d.id AS owner_id, d.account_id, 'card-front' AS use, d.format, d.created_at + interval '1 minute' AS created_at, NULL::jsonb AS drawing,
          convert_to('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 148 105"><rect width="148" height="105" fill="#F4EFE6"/><text x="10" y="50">' || d.name || '</text></svg>', 'UTF8') AS svg
        FROM card_designs d WHERE d.production = 'printed'
        UNION ALL
        SELECT d.id, d.account_id, 'envelope-logo', d.format, d.created_at + interval '1 minute', NULL,
          convert_to('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 40 20"><circle cx="10" cy="10" r="8" fill="#2E5E4E"/><text x="20" y="14">' || left(d.name, 8) || '</text></svg>', 'UTF8')
        FROM envelope_designs d
        UNION ALL
        SELECT s.id, s.account_id, 'signature', NULL, s.created_at + interval '1 minute',
          jsonb_build_object('kind', 'paths', 'width', 300, 'height', 100, 'paths', jsonb_build_array('M10 80 C 40 10, 65 10, 95 80 S 150 150, 180 80', 'M190 70 L 280 60')),
          convert_to('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 300 100"><path d="M10 80 C 40 10, 65 10, 95 80 S 150 150, 180 80" stroke="#1B2A4A" fill="none"/></svg>', 'UTF8')
        FROM signatures s
      ) a`,
    },
    {
      label: 'campaigns',
      sql: `
      INSERT INTO campaigns (id, account_id, name, active, card_design_id, envelope_design_id, sender_id, signature_id, font_name, message, created_at, updated_at)
      SELECT ${hid("'campaign'", 'v.a * 1000 + v.k')}, ha.id, v.name, true, ${hid("'card'", 'v.a * 100 + v.card')}, ${hid("'envelope'", 'v.a * 100 + v.envelope')},
        ${hid("'sender'", 'v.a * 100 + v.sender')}, CASE WHEN v.signature THEN ${hid("'signature'", 'v.a')} END, v.font, v.template,
        ha.created_at + interval '1 hour' + v.k * interval '1 minute', ha.created_at + interval '1 hour' + v.k * interval '1 minute'
      FROM (${valuesList(campaignRows)}) AS v(a, k, name, card, envelope, sender, signature, font, template) JOIN ha ON ha.a = v.a`,
    },
    {
      label: 'campaign_variables',
      sql: `INSERT INTO campaign_variables (campaign_id, position, name, max_size, default_value, example) SELECT id, 0, 'nombre', 60, 'amiga', 'Lucía' FROM campaigns`,
    },
    {
      label: 'webhook_endpoints',
      sql: [
        `CREATE UNLOGGED TABLE hep AS
        SELECT v.a::int AS a, v.e::int AS e, ${hid("'endpoint'", 'v.a * 10 + v.e')} AS id, v.events::text[] AS events, v.fail_rate::float8 AS fail_rate
        FROM (${endpointRows.length > 0 ? valuesList(endpointRows) : 'VALUES (0, 0, ARRAY[]::text[], 0.0)'}) AS v(a, e, events, fail_rate) WHERE v.a > 0`,
        `INSERT INTO webhook_endpoints (id, account_id, url, events, secret, livemode, disabled, created_at)
        SELECT p.id, ha.id, 'https://hooks.cliente' || p.a || '.example.com/letters/' || p.e, p.events,
          'whsec_' || encode(sha256(convert_to('secret:' || p.a || ':' || p.e, 'UTF8')), 'base64'), true, false, ha.created_at + p.e * interval '2 hours'
        FROM hep p JOIN ha ON ha.a = p.a`,
        'ANALYZE hep',
      ],
    },
    {
      label: 'letter choices (print specs)',
      sql: [
        `CREATE UNLOGGED TABLE hc AS
        SELECT x.*, s.spec,
          -- stocksOf (packages/contracts): the format, the stock code (or the design's artwork), and whether the floor prints the front.
          (s.spec -> 'card' ->> 'format') || ' ' || coalesce(s.spec -> 'card' ->> 'stockCode', (s.spec -> 'card' ->> 'designId') || '@' || coalesce(s.spec -> 'card' -> 'artwork' ->> 'version', '0'))
            || CASE WHEN s.spec -> 'card' ->> 'production' = 'printed' AND s.spec -> 'card' -> 'artwork' <> 'null' THEN ' + anverso impreso' ELSE '' END AS card_stock,
          (s.spec -> 'envelope' ->> 'format') || ' ' || coalesce(s.spec -> 'envelope' ->> 'stockCode', (s.spec -> 'envelope' ->> 'designId') || '@' || coalesce(s.spec -> 'envelope' -> 'artwork' ->> 'version', '0')) AS envelope_stock
        FROM (
          SELECT v.a::int AS a, v.choice::int AS choice, CASE WHEN v.campaign IS NOT NULL THEN ${hid("'campaign'", 'v.a * 1000 + v.campaign')} END AS campaign_id,
            ${hid("'card'", 'v.a * 100 + v.card')} AS card_id, ${hid("'envelope'", 'v.a * 100 + v.envelope')} AS envelope_id,
            ${hid("'sender'", 'v.a * 100 + v.sender')} AS sender_id, CASE WHEN v.signature THEN ${hid("'signature'", 'v.a')} END AS signature_id,
            coalesce(v.font, 'caveat') AS font_name, v.template::text AS template
          FROM (${valuesList(choiceRows)}) AS v(a, choice, campaign, card, envelope, sender, signature, font, template)
        ) x CROSS JOIN LATERAL (SELECT letter_print_spec(x.card_id, x.envelope_id, x.sender_id, x.signature_id) AS spec) s`,
        'ANALYZE hc',
      ],
    },
  ]
}

/** The recipients letters are sent to (hr), with what the address check made of each and what its erasure leaves. */
function recipientPool({ POOL }: Fill): Task {
  const cities = CITIES.map(([country, city, province, zip, countryName], index) => [index + 1, country, city, province, zip, countryName])
  const spanish = CITIES.filter(([country]) => country === 'ES').length
  const pick = (values: readonly string[], salt: number) => `(${literal(values)})[1 + floor(${values.length} * ${u('k', salt)})::int]`
  return [
    {
      label: 'recipients (pool)',
      sql: [
        `CREATE UNLOGGED TABLE hr AS
        WITH p AS (
          SELECT k, ${pick(FIRST_NAMES, 201)} AS first_name, ${pick(SURNAMES, 202)} || ' ' || ${pick(SURNAMES, 203)} AS surname,
            CASE WHEN ${u('k', 204)} < 0.1 THEN ${pick(COMPANIES, 205)} END AS company,
            ${pick(STREETS, 206)} || ' ' || (1 + floor(150 * ${u('k', 207)}))::int
              || CASE WHEN ${u('k', 208)} < 0.6 THEN ', ' || (1 + floor(8 * ${u('k', 209)}))::int || 'º ' || substr('ABCD', 1 + floor(4 * ${u('k', 210)})::int, 1) ELSE '' END AS street,
            CASE WHEN ${u('k', 211)} < 0.92 THEN 1 + floor(${spanish} * ${u('k', 212)})::int
                 ELSE ${spanish + 1} + floor(${CITIES.length - spanish} * ${u('k', 212)})::int END AS city_index,
            ${u('k', 213)} AS kind_draw, lpad(floor(1000 * ${u('k', 214)})::int::text, 3, '0') AS zip_tail
          FROM generate_series(1::bigint, ${POOL}::bigint) AS k
        ),
        q AS (
          SELECT p.k, p.first_name, p.surname, p.company, p.street, c.country, c.city, c.province, c.country_name,
            CASE WHEN c.country <> 'ES' THEN 'deliverable' WHEN p.kind_draw < 0.02 THEN 'undeliverable' WHEN p.kind_draw < 0.1 THEN 'corrected' ELSE 'deliverable' END AS kind,
            -- An undeliverable one has a postal code a digit short.
            c.zip || CASE WHEN c.country = 'ES' AND p.kind_draw < 0.02 THEN left(p.zip_tail, 2) ELSE p.zip_tail END AS zip
          FROM p JOIN (${valuesList(cities)}) AS c(i, country, city, province, zip, country_name) ON c.i = p.city_index
        ),
        r AS (
          SELECT q.*, jsonb_build_object('name', first_name, 'surname', surname, 'company', company, 'address', street, 'zip', zip, 'city', city,
              'province', CASE WHEN kind = 'corrected' THEN NULL ELSE province END, 'country', country) AS recipient
          FROM q
        )
        SELECT k, first_name, country, kind, CASE WHEN country = 'ES' THEN 3 ELSE 5 END AS cost, recipient,
          jsonb_build_object('name', '', 'surname', '', 'company', NULL, 'address', '', 'zip', '', 'city', '', 'province', NULL, 'country', country) AS recipient_erased,
          address, address || '{"name": "", "surname": "", "company": null, "address": "", "zip": "", "city": "", "province": null, "changes": [], "problems": []}'::jsonb AS address_erased,
          CASE WHEN country = 'ES'
            THEN jsonb_build_array(first_name || ' ' || surname) || CASE WHEN company IS NULL THEN '[]' ELSE jsonb_build_array(company) END
              || jsonb_build_array(street, zip || ' ' || city || CASE WHEN province <> city THEN ' (' || province || ')' ELSE '' END)
            ELSE jsonb_build_array(first_name || ' ' || surname) || CASE WHEN company IS NULL THEN '[]' ELSE jsonb_build_array(company) END
              || jsonb_build_array(street, zip || ' ' || upper(city), upper(country_name))
          END AS address_lines,
          CASE WHEN kind = 'corrected' THEN 'Dirección corregida: province (provincia deducida del código postal)' ELSE 'Dirección verificada' END AS checked_detail,
          'el código postal ''' || zip || ''' no tiene el formato de ' || country_name AS problem,
          'el código postal ''…'' no tiene el formato de ' || country_name AS problem_erased
        FROM (
          SELECT r.*, r.recipient || jsonb_build_object('province', province, 'countryName', country_name, 'deliverability', kind,
              'changes', CASE WHEN kind = 'corrected' THEN jsonb_build_array(jsonb_build_object('field', 'province', 'from', NULL, 'to', province, 'reason', 'provincia deducida del código postal')) ELSE '[]' END,
              'problems', CASE WHEN kind = 'undeliverable' THEN jsonb_build_array('el código postal ''' || zip || ''' no tiene el formato de ' || country_name) ELSE '[]' END,
              'verifiedBy', 'offline') AS address
          FROM r
          OFFSET 0
        ) x`,
        'ANALYZE hr',
      ],
    },
  ]
}

/**
 * Every letter's life, as instants (staging table hl): when it was made, scheduled, checked,
 * cancelled or rejected, claimed by the floor, batched, printed, mailed and erased, and so its
 * status now. Planned first (hl0), then batched (hb, hbb), then cut at now: a stage still to come
 * has no instant.
 */
async function letterTimelines(lanes: Lanes, f: Fill): Promise<void> {
  const { plans, N, B, POOL, NOW, START, SPAN } = f
  // The other accounts share the letters the big one does not hold, by a Zipf-like law (weights
  // 1/(i+4), i from 1): at 200 accounts the largest of them holds about half the big one's, the smallest about 1/40 of that.
  const weights = plans.slice(1).map((_, index) => 1 / (index + 5))
  const total = weights.reduce((sum, weight) => sum + weight, 0)
  const thresholds: number[] = []
  let cumulative = 0
  for (const weight of weights) {
    thresholds.push(cumulative / total)
    cumulative += weight
  }
  const big = plans[0]!
  const tiny = TINY_CAMPAIGNS.map((campaign, index) => {
    const first = Math.max(1, Math.floor(B * campaign.at))
    return `WHEN j >= ${first} AND j < ${first + campaign.letters} THEN ${big.campaigns + index + 1}`
  }).join(' ')
  const planned = (where: (number: string) => string) => `
    WITH b AS (
      SELECT n, (n * ${B}) / ${N} - ((n - 1) * ${B}) / ${N} = 1 AS big, (n * ${B}) / ${N} AS j,
        ${START} + ${secs(`(n - 1 + ${u('n', 3)}) * ${SPAN} / ${N}`)} AS c,
        ${u('n', 4)} >= ${TEST_SHARE} AS livemode, ${u('n', 5)} < ${SCHEDULED_SHARE} AS scheduled, ${u('n', 9)} AS outcome,
        1 + floor(${POOL} * ${u('n', 8)})::int AS k
      FROM generate_series(1::bigint, ${N}::bigint) AS n
      WHERE ${where('n')}
    ),
    owned AS (
      SELECT b.*, CASE WHEN big THEN 1 ELSE 1 + width_bucket(${u('n', 2)}, '{${thresholds.join(',')}}'::float8[]) END AS a,
        CASE WHEN big THEN CASE ${tiny} END END AS tiny
      FROM b
    ),
    made AS (
      SELECT x.*, r.kind = 'undeliverable' AS bad,
        CASE WHEN tiny IS NOT NULL THEN tiny
             WHEN ${u('n', 7)} < ${CAMPAIGN_SHARE} THEN 1 + floor(ha.campaigns * ${u('n', 11)} ^ 2)::int
             ELSE 1001 + floor(ha.singles * ${u('n', 11)})::int END AS choice,
        CASE WHEN scheduled THEN c + ${secs(`3600 + 14 * 86400 * ${u('n', 6)}`)} END AS send_at
      FROM owned x JOIN ha ON ha.a = x.a JOIN hr r ON r.k = x.k
    ),
    checked AS (
      -- The address check takes seconds; one in fifty waits minutes for the verifier's retries.
      SELECT made.*, coalesce(send_at, c) + ${secs(`CASE WHEN ${u('n', 19)} < 0.02 THEN 60 + 1740 * ${u('n', 13)} ELSE 3 + 57 * ${u('n', 13)} END`)} AS t_check,
        outcome < ${CANCELLED_SHARE} AS cancel,
        livemode AND outcome >= ${CANCELLED_SHARE} AND outcome < ${CANCELLED_SHARE + FAILED_SHARE} AS fail,
        livemode AND outcome >= ${CANCELLED_SHARE + FAILED_SHARE} AND outcome < ${CANCELLED_SHARE + FAILED_SHARE + REPRINTED_SHARE} AS reprint
      FROM made
    ),
    planned AS (
      SELECT checked.*,
        -- One by one: the floor claims it minutes to hours later (a test letter at once).
        t_check + ${secs(`CASE WHEN livemode THEN 60 + 14400 * ${u('n', 14)} ^ 2 ELSE 2 + 20 * ${u('n', 14)} END`)} AS t_single,
        -- In a batch: the floor's morning run (08:00 UTC) after it was checked claims it.
        date_trunc('day', t_check - interval '8 hours') + interval '32 hours' AS run
      FROM checked
    )
    SELECT n, ${hid("'letter'", 'n')} AS id, a, choice, k, livemode, c, send_at, fail, reprint, run, batched,
      CASE WHEN scheduled THEN c END AS t_sched,
      CASE WHEN cancel AND scheduled THEN c + (send_at - c) * ${u('n', 12)}
           WHEN cancel AND NOT bad THEN t_check + (t_single - t_check) * ${u('n', 12)} END AS t_cancel,
      CASE WHEN NOT (cancel AND scheduled) THEN coalesce(send_at, c) END AS t_recv,
      CASE WHEN bad AND NOT (cancel AND scheduled) THEN t_check END AS t_rej,
      CASE WHEN NOT bad AND NOT (cancel AND scheduled) THEN t_check END AS t_rfp,
      CASE WHEN NOT cancel AND NOT bad THEN CASE WHEN batched THEN run + ${secs(`1200 * ${u('n', 14)}`)} ELSE t_single END END AS t_printing
    FROM (
      SELECT planned.*, livemode AND ${u('n', 10)} < ${BATCHED_SHARE} AND NOT cancel AND NOT bad AND NOT fail AND NOT reprint
        AND run + interval '1 hour' <= ${NOW} AS batched
      FROM planned
    ) x`
  await lanes.run({ label: 'letter timelines (table)', sql: `CREATE UNLOGGED TABLE hl0 AS ${planned(() => 'false')}`, counted: false })
  await lanes.all(lanes.split('letter timelines (planned)', (where) => `INSERT INTO hl0 ${planned(where)}`))
  // Batches: a morning run's letters of one pair of stocks, in the order the floor claimed them, 100 at most each.
  await lanes.run([
    { label: 'letter timelines (analyzed)', sql: 'ANALYZE hl0', counted: false },
    {
      label: 'print batches (planned)',
      sql: [
        `CREATE UNLOGGED TABLE hb AS
        SELECT n, dense_rank() OVER (ORDER BY run, card_stock, envelope_stock, (rn - 1) / ${BATCH_MAX_LETTERS}) AS b,
          ((rn - 1) % ${BATCH_MAX_LETTERS} + 1)::int AS seq, t_printing, card_stock, envelope_stock
        FROM (
          SELECT h.n, h.run, h.t_printing, c.card_stock, c.envelope_stock,
            row_number() OVER (PARTITION BY h.run, c.card_stock, c.envelope_stock ORDER BY h.t_printing, h.n) AS rn
          FROM hl0 h JOIN hc c ON c.a = h.a AND c.choice = h.choice
          WHERE h.batched
        ) x`,
        'ANALYZE hb',
      ],
    },
    {
      label: 'print batches (closed)',
      sql: [
        `CREATE UNLOGGED TABLE hbb AS
        SELECT b, count(*)::int AS cnt, min(t_printing) + interval '5 seconds' AS opened_at, max(t_printing) + interval '7 seconds' AS closed_at,
          max(t_printing) + ${secs(`27 + 40 * ${u('b', 51)}`)} AS handed_at, min(card_stock) AS card_stock, min(envelope_stock) AS envelope_stock
        FROM hb GROUP BY b`,
        'ANALYZE hbb',
      ],
    },
  ])
  const cut = (column: string) => `CASE WHEN ${column} <= ${NOW} THEN ${column} END AS ${column}`
  const stages = [
    't_sched',
    't_cancel',
    't_recv',
    't_rej',
    't_rfp',
    't_printing',
    't_f1',
    't_f2',
    't_f3',
    't_f4',
    't_failed',
    't_reclaim',
    't_printed',
    't_mailed',
  ]
  const final = (where: (number: string) => string) => `
    SELECT y.*, CASE WHEN y.status IN ('printed', 'mailed', 'cancelled', 'address_rejected', 'failed') AND y.erase_at <= ${NOW} THEN y.erase_at END AS erased_at
    FROM (
      SELECT x.*,
        CASE WHEN t_mailed IS NOT NULL THEN 'mailed' WHEN t_printed IS NOT NULL THEN 'printed' WHEN t_failed IS NOT NULL THEN 'failed'
             WHEN t_cancel IS NOT NULL THEN 'cancelled' WHEN t_rej IS NOT NULL THEN 'address_rejected' WHEN t_printing IS NOT NULL THEN 'printing'
             WHEN t_rfp IS NOT NULL THEN 'ready_for_print' WHEN t_recv IS NOT NULL THEN 'received' ELSE 'scheduled' END AS status,
        greatest(${stages.join(', ')}) AS updated_at,
        greatest(${stages.join(', ')}) + interval '${PERSONAL_DATA_RETENTION_DAYS} days' + ${secs(`60 + 900 * ${u('n', 17)}`)} AS erase_at,
        (t_printing IS NOT NULL)::int + (t_reclaim IS NOT NULL)::int + (t_f2 IS NOT NULL)::int + (t_f4 IS NOT NULL)::int AS print_claim
      FROM (
        SELECT n, id, a, choice, k, livemode, c, send_at, b, seq, cnt, ${stages.map(cut).join(', ')}
        FROM (
          SELECT q.*, q.t_printed + ${secs(`CASE WHEN q.livemode THEN 72000 + 172800 * ${u('q.n', 16)} ELSE 60 + 5 * ${u('q.n', 16)} END`)} AS t_mailed
          FROM (
            SELECT h.*, hb.b, hb.seq, hbb.cnt,
              h.t_printing + CASE WHEN h.reprint THEN interval '10 minutes' END AS t_reclaim,
              h.t_printing + CASE WHEN h.fail THEN interval '30 seconds' END AS t_f1,
              h.t_printing + CASE WHEN h.fail THEN interval '60 seconds' END AS t_f2,
              h.t_printing + CASE WHEN h.fail THEN interval '120 seconds' END AS t_f3,
              h.t_printing + CASE WHEN h.fail THEN interval '180 seconds' END AS t_f4,
              h.t_printing + CASE WHEN h.fail THEN interval '240 seconds' END AS t_failed,
              CASE WHEN hb.b IS NOT NULL THEN hbb.handed_at + interval '1 second'
                   WHEN NOT h.fail THEN h.t_printing + CASE WHEN h.reprint THEN interval '10 minutes' ELSE interval '0 seconds' END
                     -- Rendered and handed over in a minute; one in ten waits minutes for a busy printer.
                     + ${secs(`CASE WHEN NOT h.livemode THEN 3 + 6 * ${u('h.n', 15)} WHEN ${u('h.n', 20)} < 0.1 THEN 120 + 1080 * ${u('h.n', 15)}
                                    ELSE 15 + 60 * ${u('h.n', 15)} END`)} END AS t_printed
            FROM hl0 h LEFT JOIN hb ON hb.n = h.n LEFT JOIN hbb ON hbb.b = hb.b
            WHERE ${where('h.n')}
          ) q
        ) p
      ) x
    ) y`
  await lanes.run({ label: 'letter timelines (final table)', sql: `CREATE UNLOGGED TABLE hl AS ${final(() => 'false')}`, counted: false })
  await lanes.all(lanes.split('letter timelines', (where) => `INSERT INTO hl ${final(where)}`))
  await lanes.run({ label: 'letter timelines (analyzed)', sql: 'ANALYZE hl', counted: false })
}

/** The letters: each as its timeline left it, erased if it was due. */
function letters(where: (number: string) => string): string {
  return `
    INSERT INTO letters (id, account_id, type, campaign_id, card_design_id, envelope_design_id, sender_id, signature_id, font_name, message, recipient,
      address, address_lines, print_spec, status, cost, livemode, send_at, print_claim, personal_data_erased_at, artifacts_removed_at, created_at, updated_at)
    SELECT h.id, ha.id, CASE WHEN c.campaign_id IS NULL THEN 'single' ELSE 'campaign' END, c.campaign_id, c.card_id, c.envelope_id, c.sender_id, c.signature_id,
      c.font_name, CASE WHEN h.erased_at IS NULL THEN replace(c.template, '{{nombre}}', r.first_name) ELSE '' END,
      CASE WHEN h.erased_at IS NULL THEN r.recipient ELSE r.recipient_erased END,
      CASE WHEN h.t_rfp IS NULL AND h.t_rej IS NULL THEN NULL WHEN h.erased_at IS NULL THEN r.address ELSE r.address_erased END,
      CASE WHEN h.t_rfp IS NOT NULL AND h.erased_at IS NULL THEN r.address_lines END,
      c.spec, h.status, r.cost, h.livemode, h.send_at, h.print_claim, h.erased_at, h.erased_at + ${secs(`1 + 4 * ${u('h.n', 18)}`)}, h.c, h.updated_at
    FROM hl h JOIN ha ON ha.a = h.a JOIN hc c ON c.a = h.a AND c.choice = h.choice JOIN hr r ON r.k = h.k
    WHERE ${where('h.n')}`
}

/** Each letter's letter_events, its ids in the order of its changes (16 a letter), with the details the pipeline writes. */
function letterEvents(where: (number: string) => string): string {
  const cancelled = `CASE WHEN h.livemode THEN 'Cancelada por el cliente; ' || r.cost || ' créditos devueltos' ELSE 'Cancelada por el cliente; carta de prueba, sin cargo que devolver' END`
  return `
    INSERT INTO letter_events (id, letter_id, status, detail, at)
    SELECT h.n * 16 + v.k, h.id, v.status, v.detail, v.at
    FROM hl h JOIN hr r ON r.k = h.k
    CROSS JOIN LATERAL (VALUES
      (0, 'scheduled', h.t_sched, 'Programada: entrará en producción en la fecha indicada'),
      (1, 'cancelled', CASE WHEN h.t_recv IS NULL THEN h.t_cancel END, ${cancelled}),
      (2, 'received', h.t_recv, CASE WHEN h.send_at IS NOT NULL THEN ${literal(RELEASED_DETAIL)} END),
      (3, 'address_rejected', h.t_rej, 'Dirección no entregable: ' || CASE WHEN h.erased_at IS NULL THEN r.problem ELSE r.problem_erased END || '. '
        || CASE WHEN h.livemode THEN 'Créditos devueltos.' ELSE 'Carta de prueba: sin cargo que devolver.' END),
      (4, 'ready_for_print', h.t_rfp, r.checked_detail),
      (5, 'cancelled', CASE WHEN h.t_recv IS NOT NULL THEN h.t_cancel END, ${cancelled}),
      (6, 'printing', h.t_printing, 'En producción'),
      (7, 'printing', h.t_f1, 'Intento 1 de 3 fallido; se reintentará'),
      (8, 'printing', coalesce(h.t_reclaim, h.t_f2), 'En producción de nuevo: el intento anterior no terminó'),
      (9, 'printing', h.t_f3, 'Intento 2 de 3 fallido; se reintentará'),
      (10, 'printing', h.t_f4, 'En producción de nuevo: el intento anterior no terminó'),
      (11, 'failed', h.t_failed, 'La producción falló tras 3 intentos; operaciones revisará la carta'),
      (12, 'printed', h.t_printed, CASE WHEN NOT h.livemode THEN 'Carta de prueba: tarjeta y sobre generados; no se ha impreso'
        WHEN h.b IS NOT NULL THEN 'Entregada a la impresora en el lote ' || ${hid("'batch'", 'h.b')} || ' (n.º ' || h.seq || ' de ' || h.cnt || ')'
        ELSE 'Entregada a la impresora (spool): tarjeta y sobre' END),
      (13, 'mailed', h.t_mailed, CASE WHEN h.livemode THEN 'Entregada a correos' ELSE ${literal(TEST_MAILED_DETAIL)} END)
    ) AS v(k, status, at, detail)
    WHERE v.at IS NOT NULL AND ${where('h.n')}`
}

/** Credits: a top-up before each month an account sent letters in, a charge per live letter, a refund per live letter cancelled or rejected; split by account. */
function ledger({ START, SPAN }: Fill, where: (number: string) => string): string {
  const month = `least(${MONTHS - 1}, floor(extract(epoch FROM h.c - ${START}) * ${MONTHS} / ${SPAN}))::int`
  return `
    INSERT INTO ledger_entries (account_id, kind, amount, balance_after, letter_id, reason, created_at)
    SELECT ha.id, m.kind, m.amount, sum(m.amount) OVER (PARTITION BY m.a ORDER BY m.at, m.ord, m.n ROWS UNBOUNDED PRECEDING)::int, m.letter_id, m.reason, m.at
    FROM (
      SELECT h.a, 'charge' AS kind, -r.cost AS amount, h.id AS letter_id, NULL::text AS reason, h.c AS at, 1 AS ord, h.n
      FROM hl h JOIN hr r ON r.k = h.k WHERE h.livemode
      UNION ALL
      SELECT h.a, 'refund', r.cost, h.id, CASE WHEN h.t_cancel IS NOT NULL THEN '${ledgerReasons.cancelledByClient}' ELSE '${ledgerReasons.addressRejected}' END, coalesce(h.t_cancel, h.t_rej), 1, h.n
      FROM hl h JOIN hr r ON r.k = h.k WHERE h.livemode AND (h.t_cancel IS NOT NULL OR h.t_rej IS NOT NULL)
      UNION ALL
      -- The month's credits bought an hour before it starts: what its letters cost and a fifth more, in hundreds.
      SELECT t.a, 'top_up', (ceil(t.cost * 1.2 / 100) * 100)::int, NULL, 'Compra de créditos',
        ${START} + ${secs(`t.month * ${SPAN} / ${MONTHS}`)} - interval '1 hour' - ${secs(`600 * ${u('t.a * 100 + t.month', 60)}`)}, 0, 0
      FROM (SELECT h.a, ${month} AS month, sum(r.cost) AS cost FROM hl h JOIN hr r ON r.k = h.k WHERE h.livemode GROUP BY 1, 2) t
      UNION ALL
      SELECT ha.a, 'adjustment', 250, NULL, 'Compensación por una incidencia de impresión', ${START} + ${secs(`${SPAN} / 2`)}, 2, 0
      FROM ha WHERE ha.a % 7 = 3
    ) m JOIN ha ON ha.a = m.a
    WHERE ${where('m.a')}
    ORDER BY m.at, m.ord, m.n`
}

/** The pipeline's jobs: an address check per letter received, a production job per letter ready for print, all dispatched. */
function outboxJobs({ NOW }: Fill, where: (number: string) => string): string {
  return `
    INSERT INTO outbox (id, queue, job_name, payload, created_at, sent_at, attempts)
    SELECT ${hid('j.kind', 'h.n')}, j.queue, j.job_name, jsonb_build_object('letterId', h.id), j.at, least(j.at + interval '15 milliseconds', ${NOW}), 1
    FROM hl h CROSS JOIN LATERAL (VALUES ('job-address', ${outboxTargetSql('normalize-address')}, h.t_recv), ('job-production', ${outboxTargetSql('produce-letter')}, h.t_rfp))
      AS j(kind, queue, job_name, at)
    WHERE j.at IS NOT NULL AND ${where('h.n')}`
}

/** A card and an envelope handed to the printer per live letter printed alone. */
function printHandoffs(): string {
  return `
    INSERT INTO print_handoffs (letter_id, file, claim, printer, handed_at)
    SELECT h.id, h.id || f.suffix, h.print_claim, 'spool', coalesce(h.t_reclaim, h.t_printing) + f.after
    FROM hl h CROSS JOIN (VALUES ('.card.pdf', interval '8 seconds'), ('.envelope.pdf', interval '12 seconds')) AS f(suffix, after)
    -- An erased letter's records went with its files (recordLetterArtifactsRemoved).
    WHERE h.livemode AND h.b IS NULL AND h.t_printed IS NOT NULL AND h.erased_at IS NULL`
}

/**
 * The batches, their letters in order, and their three files each (batchFileNames, packages/artifacts:
 * cards, envelopes, manifest, in that order). A batch whose letters are all erased went with its
 * files (recordBatchArtifactsRemoved): only the batches holding a letter not yet erased are kept (hbk).
 */
function printBatches(): Task {
  return [
    {
      label: 'print_batches',
      sql: [
        `CREATE UNLOGGED TABLE hbk AS SELECT b FROM hl WHERE b IS NOT NULL GROUP BY b HAVING bool_or(erased_at IS NULL)`,
        `INSERT INTO print_batches (id, status, opened_at, closed_at, handed_at, letter_count, card_stock, envelope_stock)
        SELECT ${hid("'batch'", 'b.b')}, 'handed', b.opened_at, b.closed_at, b.handed_at, b.cnt, b.card_stock, b.envelope_stock
        FROM hbb b JOIN hbk USING (b)
        ORDER BY b.b`,
      ],
    },
    {
      label: 'print_batch_letters',
      sql: `
      INSERT INTO print_batch_letters (batch_id, letter_id, sequence, added_at)
      SELECT ${hid("'batch'", 'h.b')}, h.id, h.seq, h.t_printing + interval '5 seconds' FROM hl h JOIN hbk USING (b)`,
    },
    {
      label: 'print_batch_handoffs',
      sql: `
      INSERT INTO print_batch_handoffs (batch_id, file, printer, handed_at)
      SELECT ${hid("'batch'", 'b.b')}, 'batch-' || ${hid("'batch'", 'b.b')} || f.suffix, 'spool', b.closed_at + f.after
      FROM hbb b JOIN hbk USING (b)
      CROSS JOIN (VALUES ('.cards.pdf', interval '4 seconds'), ('.envelopes.pdf', interval '8 seconds'), ('.manifest.csv', interval '10 seconds')) AS f(suffix, after)`,
    },
  ]
}

/** The Idempotency-Keys of the last day's requests, as the cleanup leaves them. */
function idempotencyKeys({ NOW }: Fill): string {
  return `
    INSERT INTO idempotency_keys (account_id, livemode, key, request_hash, response_status, response_body, created_at, expires_at)
    SELECT ha.id, h.livemode, 'pedido-' || substr(md5('idempotency:' || h.n), 1, 20), encode(sha256(convert_to('request:' || h.n, 'UTF8')), 'hex'), 200,
      jsonb_build_object('success', true, 'cardId', h.id), h.c, h.c + interval '${publicApi.IDEMPOTENCY_TTL_HOURS} hours'
    FROM hl h JOIN ha ON ha.a = h.a
    WHERE h.c >= ${NOW} - interval '${IDEMPOTENCY_KEPT_HOURS} hours' AND ${u('h.n', 30)} < 0.9`
}

/**
 * The bodies of the status changes someone keeps (staging table ev: those of the last 30 days, and
 * those an endpoint subscribed to), each written once as letterEventsSql writes it, or as the
 * erasure rewrote it for a letter erased since (through jsonb).
 */
function eventBodies({ NOW }: Fill, where: (number: string) => string): string {
  const data = (build: string) => `${build}('id', l.id, 'code', l.code, 'livemode', l.livemode, 'type', l.type, 'status', v.status,
      'sendAt', ${iso('l.send_at')}, 'campaignId', l.campaign_id, 'cardDesignId', l.card_design_id, 'envelopeDesignId', l.envelope_design_id, 'senderId', l.sender_id,
      'signatureId', l.signature_id, 'fontName', l.font_name, 'message', l.message, 'recipient', l.recipient, 'address', CASE WHEN v.checked THEN l.address END,
      'addressLines', CASE WHEN v.checked THEN l.address_lines END, 'cost', l.cost,
      'createdAt', ${iso('l.created_at')}, 'updatedAt', ${iso('v.at')}, 'personalDataErasedAt', ${iso('l.personal_data_erased_at')})`
  const body = (build: string) =>
    `${build}('id', ${hid("'event'", 'h.n * 16 + v.k')}, 'type', 'letter.' || v.status, 'sequence', v.seq, 'occurredAt', ${iso('v.at')},
      'timestamp', ${iso("v.at + interval '3 milliseconds'")}, 'data', ${data(build)})::text`
  const cutoff = `${NOW} - interval '${EVENT_RETENTION_DAYS} days'`
  return `
    SELECT h.n * 16 + v.k AS key, ${hid("'event'", 'h.n * 16 + v.k')} AS id, h.a, h.livemode, h.id AS letter_id, 'letter.' || v.status AS type, v.seq, v.at,
      CASE WHEN l.personal_data_erased_at IS NULL THEN ${body('json_build_object')} ELSE ${body('jsonb_build_object')} END AS body
    FROM (
      SELECT h.*, ha.subscribed, (h.t_sched IS NOT NULL)::int AS o FROM hl h JOIN ha ON ha.a = h.a
      WHERE ((h.livemode AND cardinality(ha.subscribed) > 0) OR h.updated_at >= ${cutoff}) AND ${where('h.n')}
    ) h
    JOIN letters l ON l.id = h.id
    CROSS JOIN LATERAL (VALUES
      (0, 'scheduled', h.t_sched, 1, false),
      (1, 'cancelled', CASE WHEN h.t_recv IS NULL THEN h.t_cancel END, 2, false),
      (2, 'received', h.t_recv, h.o + 1, false),
      (3, 'address_rejected', h.t_rej, h.o + 2, true),
      (4, 'ready_for_print', h.t_rfp, h.o + 2, true),
      (5, 'cancelled', CASE WHEN h.t_recv IS NOT NULL THEN h.t_cancel END, h.o + 3, true),
      (6, 'printing', h.t_printing, h.o + 3, true),
      (11, 'failed', h.t_failed, h.o + 4, true),
      (12, 'printed', h.t_printed, h.o + 4, true),
      (13, 'mailed', h.t_mailed, h.o + 5, true)
    ) AS v(k, status, at, seq, checked)
    WHERE v.at IS NOT NULL AND (v.at >= ${cutoff} OR (h.livemode AND 'letter.' || v.status = ANY(h.subscribed)))`
}

/** What GET /events lists: the last 30 days of events; the older ones the retention deleted. */
function events({ NOW }: Fill): string {
  return `
    INSERT INTO events (id, account_id, livemode, letter_id, type, sequence, occurred_at, body)
    SELECT e.id, ha.id, e.livemode, e.letter_id, e.type, e.seq, e.at, e.body FROM ev e JOIN ha ON ha.a = e.a
    WHERE e.at >= ${NOW} - interval '${EVENT_RETENTION_DAYS} days'`
}

/**
 * Each subscribed endpoint's copy of an event: delivered at the first attempt; or after one that
 * failed; or failed at each of the 8. A recent one (the last two days) was delivered at once: none
 * is still pending. Every draw is a hash of the copy's id (w), so its attempts agree with it.
 */
function webhookEvents({ NOW }: Fill, where: (number: string) => string): string {
  return `
    INSERT INTO webhook_events (id, endpoint_id, type, body, state, attempts, created_at, finished_at)
    SELECT x.id, x.endpoint_id, x.type, x.body, CASE WHEN x.mode = 'failed' THEN 'failed' ELSE 'delivered' END, x.attempts, x.created_at,
      ${STAGING}.attempt_at(x.created_at, x.w, x.attempts) + ${STAGING}.attempt_ms(x.w, x.attempts, x.mode <> 'failed') * interval '1 millisecond'
    FROM (
      SELECT y.*, CASE y.mode WHEN 'failed' THEN 8 WHEN 'retried' THEN 2 ELSE 1 END AS attempts
      FROM (
        SELECT z.*, CASE WHEN z.created_at >= ${NOW} - interval '2 days' THEN 'ok' WHEN ${u('z.w', 1)} < z.fail_rate THEN 'failed'
                         WHEN ${u('z.w', 1)} < z.fail_rate + 0.015 THEN 'retried' ELSE 'ok' END AS mode
        FROM (
          SELECT s.*, hashtextextended(s.id::text, 0) AS w
          FROM (
            SELECT ${hid("'webhook-event'", 'e.key * 4 + p.e')} AS id, p.id AS endpoint_id, p.fail_rate, e.type, e.body, e.at + interval '2 milliseconds' AS created_at
            FROM ev e JOIN hep p ON p.a = e.a AND e.livemode AND e.type = ANY(p.events)
            WHERE ${where('e.key / 16')}
          ) s
          -- Computed once per row, not once per use.
          OFFSET 0
        ) z
      ) y
    ) x`
}

/** Every attempt of every delivery: the last of a delivered one a 2xx, the others a timeout, a refused connection or a 5xx. */
function webhookAttempts(where: (number: string) => string): string {
  return `
    INSERT INTO webhook_attempts (event_id, endpoint_id, attempt, status_code, error, duration_ms, at, next_attempt_at, outcome)
    SELECT w.id, w.endpoint_id, i,
      CASE WHEN ok THEN CASE WHEN ${u('w.w', 400)} < 0.9 THEN 200 ELSE 204 END
           WHEN ${u('w.w', '300 + i')} >= 0.5 THEN (ARRAY[500, 502, 503])[1 + floor(3 * ${u('w.w', '500 + i')})::int] END,
      CASE WHEN ok THEN NULL WHEN ${u('w.w', '300 + i')} < 0.3 THEN 'timeout' WHEN ${u('w.w', '300 + i')} < 0.5 THEN 'connection' END,
      ${STAGING}.attempt_ms(w.w, i, ok), ${STAGING}.attempt_at(w.created_at, w.w, i),
      CASE WHEN i < w.attempts THEN ${STAGING}.attempt_at(w.created_at, w.w, i + 1) - interval '200 milliseconds' END,
      CASE WHEN ok THEN 'delivered' WHEN i < w.attempts THEN 'retrying' ELSE 'failed' END
    FROM (SELECT id, endpoint_id, attempts, state, created_at, hashtextextended(id::text, 0) AS w FROM webhook_events OFFSET 0) w
    CROSS JOIN LATERAL generate_series(1, w.attempts) AS i
    CROSS JOIN LATERAL (SELECT w.state = 'delivered' AND i = w.attempts AS ok) o
    WHERE ${where('w.w & 1023')}`
}

/** The webhook worker's admission queued a job per attempt, named after the lease it gave (deliver-webhook). */
function webhookDeliveryJobs(where: (number: string) => string): string {
  return `
    INSERT INTO outbox (id, queue, job_name, payload, created_at, sent_at, attempts)
    SELECT ${hid("'lease:' || a.event_id", 'a.attempt')}, ${outboxTargetSql('deliver-webhook')}, jsonb_build_object('eventId', a.event_id),
      a.at - interval '40 milliseconds', a.at - interval '35 milliseconds', 1
    FROM webhook_attempts a
    WHERE ${where('a.id')}`
}

/** Every foreign key of the schema, checked over its whole table at once: the rows written without the per-row checks must all hold. */
async function foreignKeyChecks(lanes: Lanes): Promise<Task[]> {
  const keys = await lanes.query<{ name: string; child: string; column: string; parent: string; key: string }>(`
    SELECT c.conname AS name, quote_ident(r.relname) AS child, quote_ident(a.attname) AS column, quote_ident(pr.relname) AS parent, quote_ident(f.attname) AS key
    FROM pg_constraint c
    JOIN pg_class r ON r.oid = c.conrelid
    JOIN pg_class pr ON pr.oid = c.confrelid
    JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
    JOIN pg_attribute f ON f.attrelid = c.confrelid AND f.attnum = c.confkey[1]
    WHERE c.contype = 'f' AND c.connamespace = 'public'::regnamespace AND cardinality(c.conkey) = 1
    ORDER BY pg_relation_size(c.conrelid) DESC, c.conname`)
  return keys.map((key) => [
    {
      label: `foreign key ${key.name}`,
      counted: false,
      sql: `DO $$ BEGIN
        IF EXISTS (SELECT 1 FROM public.${key.child} t WHERE t.${key.column} IS NOT NULL AND NOT EXISTS (SELECT 1 FROM public.${key.parent} p WHERE p.${key.key} = t.${key.column}))
        THEN RAISE EXCEPTION 'fillHistory wrote rows of ${key.child} that break ${key.name}';
        END IF;
      END $$`,
    },
  ])
}
