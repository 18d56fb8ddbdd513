import { resolve } from 'node:path'

/**
 * How the environment is read: one declaration per variable (its name, how its text is read, its
 * default, its documentation), the readers shared by the variables that follow one pattern, and
 * the walk that reads a tree of declarations into a value of the same shape.
 */

export class ConfigError extends Error {
  override name = 'ConfigError'
}

/** A value refused; `why`, when set, is said instead of the variable's rule. */
export class Refusal {
  constructor(readonly why?: string) {}
}

/** How a variable's text is read. */
export interface Parser<T> {
  /** What a value must be, as a refusal says it after `NAME=value: `. */
  readonly rule: string
  /** The value `raw` (never empty: an empty variable is an unset one) stands for, or a Refusal. */
  read(raw: string): T | Refusal
}

export function parser<T>(rule: string, read: (raw: string) => T | Refusal): Parser<T> {
  return { rule, read }
}

/** `parse`, then `then` on what it read: a further check, or another form of the value. */
export function refine<T, U>(parse: Parser<T>, then: (value: T) => U | Refusal): Parser<U> {
  return parser(parse.rule, (raw) => {
    const value = parse.read(raw)
    return value instanceof Refusal ? value : then(value)
  })
}

/** Any text. */
export const text = (rule = 'must not be empty'): Parser<string> => parser(rule, (raw) => raw)

/** Text matching `pattern`. */
export const matching = (pattern: RegExp, rule: string): Parser<string> => parser(rule, (raw) => (pattern.test(raw) ? raw : new Refusal()))

/** A path, made absolute against the directory the process starts in. */
export const directory = (): Parser<string> => parser('must be a directory path', (raw) => resolve(raw))

/** `true` or `false`, nothing else: a `yes` or a `1` is more likely a mistake than a wish. */
export const flag = (): Parser<boolean> =>
  parser('must be "true" or "false"', (raw) => {
    if (raw === 'true') return true
    if (raw === 'false') return false
    return new Refusal()
  })

/** One of `values`, spelt exactly. */
export function oneOf<const V extends readonly string[]>(values: V): Parser<V[number]> {
  const listed = `${values.slice(0, -1).join(', ')} or ${values.at(-1)}`
  return parser(`must be ${listed}`, (raw) => (values.includes(raw) ? (raw as V[number]) : new Refusal()))
}

interface IntegerRange {
  /** 0 or 1 when there is no `max`. */
  min: number
  max?: number
  /** What the integer counts (`milliseconds`). */
  unit?: string
  /** What the value is, said instead of `an integer` when there is a `max` (`a port number`). */
  noun?: string
  /** Said after the rule, in parentheses. */
  hint?: string
}

/** Decimal digits only (no sign, point, exponent or blank), from `min` to `max` (or the largest integer a double holds exactly). */
export function integer({ min, max, unit, noun, hint }: IntegerRange): Parser<number> {
  const of = unit === undefined ? '' : ` of ${unit}`
  const rule =
    max === undefined ? `must be a ${min === 0 ? 'non-negative' : 'positive'} integer${of}` : `must be ${noun ?? `an integer${of}`} from ${min} to ${max}`
  return parser(hint === undefined ? rule : `${rule} (${hint})`, (raw) => {
    const value = Number(raw)
    return /^[0-9]+$/.test(raw) && Number.isSafeInteger(value) && value >= min && value <= (max ?? Number.MAX_SAFE_INTEGER) ? value : new Refusal()
  })
}

/** An integer of milliseconds. */
export const milliseconds = (range: Omit<IntegerRange, 'unit' | 'noun'>): Parser<number> => integer({ ...range, unit: 'milliseconds' })

/** A TCP port. */
export const port = (): Parser<number> => integer({ min: 1, max: 65535, noun: 'a port number' })

/** Node's longest timer, 2^31 - 1 ms (24.8 days): setTimeout runs a longer one at once, a socket's timeout is cut to it. */
export const LONGEST_TIMER_MS = 2 ** 31 - 1

/**
 * Milliseconds a Node timer keeps: up to its longest. `tooLong` says why a longer one is refused
 * (by default, that it would fire at once or be cut short).
 */
export function timer(tooLong: (value: number) => string = () => 'a longer one would fire at once or be cut short'): Parser<number> {
  return refine(milliseconds({ min: 1 }), (value) =>
    value > LONGEST_TIMER_MS ? new Refusal(`must be at most ${LONGEST_TIMER_MS} ms (24.8 days), the longest timer Node keeps; ${tooLong(value)}`) : value,
  )
}

/** A secret of at least 16 characters. */
export const token = (): Parser<string> => parser('must be at least 16 characters long', (raw) => (raw.length >= 16 ? raw : new Refusal()))

/** A URL of one of `schemes` that the WHATWG parser reads; `example` follows the rule. */
export function url(schemes: readonly string[], example?: string): Parser<string> {
  const listed = schemes.map((scheme) => `${scheme}://`).join(' or ')
  // Said as letters (an smtp://), or as a word (a postgres://).
  const article = /^[fhlmnrsx][^aeiou]/.test(listed) ? 'an' : 'a'
  const rule = `must be ${article} ${listed} URL${example === undefined ? '' : ` (e.g. ${example})`}`
  return parser(rule, (raw) => (schemes.some((scheme) => raw.startsWith(`${scheme}://`)) && URL.canParse(raw) ? raw : new Refusal()))
}

/** Entries separated by commas (blanks around each ignored), each read by `entry`; a refusal names the first entry refused. */
export function list<T>(entry: Parser<T>, rule: string): Parser<T[]> {
  return parser(rule, (raw) => {
    const values: T[] = []
    for (const item of raw.split(',').map((part) => part.trim())) {
      const value = entry.read(item)
      if (value instanceof Refusal) return new Refusal(`${rule}; "${item}" is not one`)
      values.push(value)
    }
    return values
  })
}

/** One variable of the environment. */
export class Variable<T> {
  constructor(
    readonly env: string,
    readonly parse: Parser<T>,
    /** Its value when unset, written as in the environment; absent: unset means `undefined` here (the loader may derive one). */
    readonly defaultText: string | undefined,
    /** The documentation's Default cell (Markdown). */
    readonly shownDefault: string,
    /** The documentation's Meaning cell (Markdown). */
    readonly describe: string,
    /** Its value is a secret or holds one: a refusal names the variable without its value. */
    readonly secret: boolean,
  ) {}

  /** Its value in `env`, the default when unset or empty; a refused value throws a ConfigError `NAME=value: why`. */
  readFrom(env: Record<string, string | undefined>): T {
    const raw = env[this.env] === '' ? undefined : env[this.env]
    if (raw === undefined && this.defaultText === undefined) return undefined as T
    const value = this.parse.read(raw ?? this.defaultText!)
    if (value instanceof Refusal) throw new ConfigError(`${this.env}=${this.secret ? '(not shown)' : raw}: ${value.why ?? this.parse.rule}`)
    return value
  }
}

interface Declaration<T> {
  env: string
  parse: Parser<T>
  describe: string
  secret?: boolean
}

/** A variable with a default: `default` as it would be written in the environment, `note` after it in the documentation. */
export function variable<T>(declaration: Declaration<T> & { default: string; note?: string }): Variable<T>
/** A variable without one: unset, it is `undefined`, documented as `shown` (`none` unless said). */
export function variable<T>(declaration: Declaration<T> & { shown?: string }): Variable<T | undefined>
export function variable<T>({
  env,
  parse,
  describe,
  secret = false,
  default: defaultText,
  note,
  shown,
}: Declaration<T> & { default?: string; note?: string; shown?: string }): Variable<T | undefined> {
  if (defaultText !== undefined && parse.read(defaultText) instanceof Refusal) throw new Error(`${env}: its default ${defaultText} breaks its own rule`)
  const cell = shown ?? (defaultText === undefined ? 'none' : `\`${defaultText}\`${note === undefined ? '' : ` (${note})`}`)
  return new Variable<T | undefined>(env, parse, defaultText, cell, describe, secret)
}

/** Declarations grouped by section, as the configuration's shape nests them. */
export interface Section {
  readonly [key: string]: Variable<unknown> | Section
}

/** The value a tree of declarations reads into: the same keys, each variable's value in its place. */
export type Values<S> = { -readonly [K in keyof S]: S[K] extends Variable<infer T> ? T : Values<S[K]> }

/** Every variable of `section`'s tree in `env`, in the tree's shape; the first refused value throws. */
export function readSection<S extends Section>(section: S, env: Record<string, string | undefined>): Values<S> {
  return Object.fromEntries(
    Object.entries(section).map(([key, node]) => [key, node instanceof Variable ? node.readFrom(env) : readSection(node, env)]),
  ) as Values<S>
}

/** The variables of `section`'s tree, in its order. */
export function* variablesOf(section: Section): Generator<Variable<unknown>> {
  for (const node of Object.values(section)) {
    if (node instanceof Variable) yield node
    else yield* variablesOf(node)
  }
}
