/**
 * The fill's own schema (its plan of the accounts, the recipients, every letter's timeline, the
 * event bodies: unlogged, dropped at the end), the SQL helpers its statements share, and the lanes
 * (connections) they run on.
 */
import { performance } from 'node:perf_hooks'
import type postgres from 'postgres'
import { type AccountPlan, RETRY_CUMULATIVE_MS, WEBHOOK_TIMEOUT_MS } from './plan.js'

type SqlValue = string | number | boolean | null | readonly string[]

/** A constant of ours as an SQL literal. */
export function literal(value: SqlValue): string {
  if (value === null) return 'NULL'
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new RangeError(`not a finite number: ${value}`)
    return String(value)
  }
  if (typeof value === 'boolean') return value ? 'true' : 'false'
  if (typeof value === 'string') return `'${value.replaceAll("'", "''")}'`
  return `ARRAY[${value.map(literal).join(', ')}]::text[]`
}

export const valuesList = (rows: readonly SqlValue[][]) => `VALUES ${rows.map((row) => `(${row.map(literal).join(', ')})`).join(',\n  ')}`

/**
 * The fill's own tables and functions (its plan of the accounts, the recipients, every letter's
 * timeline, the event bodies), in a schema of their own that both connections see, unlogged, and
 * dropped at the end. The connections' search_path finds the tables; the functions are named whole.
 */
export const STAGING = 'history_fill'

/** One statement of the fill, and how its progress reads: rows written (`counted`, the default) or only the time. */
interface Step {
  label: string
  /** Run in order; the step's rows are the most any of them wrote. */
  sql: string | string[]
  counted?: boolean
}

/** Steps run one after another on one connection. */
export type Task = Step[]

/**
 * The fill's connections (two when the pool allows, one per core of the machine it was made for),
 * and the way its statements run on them: alone, or as tasks shared out, each connection taking the
 * next task as soon as it is done with one.
 */
export class Lanes {
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

/** The instants and sizes every statement of a fill shares. */
export interface Fill {
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
export const secs = (expression: string) => `(${expression}) * interval '1 second'`

/** The staging schema and its functions: a uniform draw in [0, 1) for row n and stream `salt`; an id of a kind and number (v4-shaped); an instant as the API writes it. */
export function stagingSchema(): string[] {
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

export const u = (n: string, salt: number | string) => `${STAGING}.u(${n}, ${salt})`

export const hid = (kind: string, n: string) => `${STAGING}.hid(${kind}, ${n})`

export const iso = (instant: string) => `${STAGING}.iso(${instant})`
