import createFetchClient, { type Client, type FetchResponse, type MaybeOptionalInit, type Middleware } from 'openapi-fetch'
import type { paths } from './generated/openapi.js'
import { newIdempotencyKey } from './idempotency-key.js'

/**
 * How the client reaches the API. Two ways to authenticate:
 * - with an API key (`apiKey`): on a server, in a script, wherever the key stays secret;
 * - with the session of the dashboard's browser (no `apiKey`, and `csrfToken`): the session
 *   cookie, which a same-origin fetch sends by itself, authenticates every request, and the
 *   CSRF token proves that a change comes from the dashboard's own pages.
 */
export interface ClientOptions {
  /**
   * The account's key, sent as X-API-KEY. Leave it out in a browser: a key in a page is a key
   * anyone can read. Without it no X-API-KEY is sent, and the session cookie authenticates.
   */
  apiKey?: string
  /**
   * The session's CSRF token, read again for every request, so a token renewed after the
   * client was made is the one sent. Every request other than GET and HEAD carries it as
   * X-CSRF-Token; nothing is sent when it returns undefined. For session mode in a browser.
   */
  csrfToken?: () => string | undefined
  /** Where the API lives, e.g. `http://127.0.0.1:3000`. */
  baseUrl: string
  /** Attempts after the first one, on 429, 503, a 409 "still in flight" and network errors. Default 3. */
  retries?: number
  /** The first wait when the answer gives no Retry-After; it doubles each time (with jitter). Default 500 ms. */
  retryDelayMs?: number
  /** The longest the client waits between two attempts; a Retry-After asking for longer gives the answer back. Default 30 s. */
  maxRetryDelayMs?: number
  /**
   * The longest one attempt waits for its answer before it is abandoned and, if it may be
   * repeated, tried again. Default 35 s: beyond the API's own request timeout (30 s by default),
   * which answers every request before it.
   */
  timeoutMs?: number
  /** A fetch of your own (a proxy, a test double); the global one by default. */
  fetch?: (request: Request) => Promise<Response>
}

/** Every error the API answers, typed: `message` is Spanish and meant for people, `error` is the reason phrase. */
export class LettersApiError extends Error {
  override readonly name = 'LettersApiError'
  /**
   * The Idempotency-Key the creation was sent with (yours, or the one the client made): call
   * again with `idempotencyKey` set to it and a creation that was stored after all is answered,
   * not stored twice. Undefined for requests other than a POST.
   */
  idempotencyKey: string | undefined
  constructor(
    readonly status: number,
    readonly error: string,
    message: string,
    readonly requestId: string | undefined,
    idempotencyKey?: string,
  ) {
    super(message)
    this.idempotencyKey = idempotencyKey
  }
}

/**
 * No answer came back (the connection was refused or dropped, or the attempt timed out), after
 * every retry: a creation may or may not have been stored. Call again with its `idempotencyKey`
 * to find out without paying twice.
 */
export class LettersConnectionError extends Error {
  override readonly name = 'LettersConnectionError'
  constructor(
    message: string,
    override readonly cause: unknown,
    readonly idempotencyKey: string | undefined,
  ) {
    super(message)
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Retry-After in seconds (what the API sends) or as an HTTP date; undefined when absent or unreadable. */
function retryAfterMs(response: Response): number | undefined {
  const value = response.headers.get('retry-after')
  if (!value) return undefined
  const seconds = Number(value)
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000)
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now())
}

/** The creations whose Idempotency-Key the API keeps: their only 409 is "still in flight". */
const KEYED_CREATIONS = /\/(single|card|cards\/bulk)$/

/**
 * Whether sending the request twice can do no more than sending it once: reads and deletions,
 * and the creations whose Idempotency-Key the API keeps. Another POST (registering a webhook)
 * that failed on the way back may have been done: sent again, it would be done twice.
 */
function isRepeatable(request: Request): boolean {
  return request.method !== 'POST' || (request.headers.has('idempotency-key') && KEYED_CREATIONS.test(new URL(request.url).pathname))
}

/**
 * Whether an answer is worth sending again, unchanged. 429 was refused before anything was done;
 * 503 is temporary, for a request that may be repeated; a 409 to POST /single, /card or /cards/bulk with an
 * Idempotency-Key means the first request with that key is still being processed, and the retry
 * returns its answer once done (another route's 409, such as testing a disabled webhook, would
 * come back the same). Every other 4xx would fail again the same way.
 */
function isRetryable(request: Request, status: number): boolean {
  if (status === 429) return true
  if (status === 503) return isRepeatable(request)
  return status === 409 && request.method === 'POST' && isRepeatable(request)
}

/**
 * A fetch that retries the same request (same body, same Idempotency-Key, so a creation is
 * never charged twice) on temporary answers and on network errors.
 */
function retryingFetch(
  options: Required<Pick<ClientOptions, 'retries' | 'retryDelayMs' | 'maxRetryDelayMs' | 'timeoutMs'>>,
  fetchOnce: (request: Request) => Promise<Response>,
) {
  return async (request: Request): Promise<Response> => {
    for (let attempt = 0; ; attempt++) {
      const backoff = Math.min(options.maxRetryDelayMs, options.retryDelayMs * 2 ** attempt * (0.5 + Math.random() / 2))
      let response: Response
      try {
        // The caller's signal still cancels it; the attempt's own timeout abandons only this attempt.
        const signal = AbortSignal.any([request.signal, AbortSignal.timeout(options.timeoutMs)])
        response = await fetchOnce(new Request(request.clone(), { signal }))
      } catch (error) {
        // A network error (refused, reset, DNS) or a timeout: nothing came back; a request that may be repeated goes again.
        if (attempt >= options.retries || request.signal.aborted || !isRepeatable(request)) {
          if (request.signal.aborted) throw error
          const key = request.headers.get('idempotency-key') ?? undefined
          throw new LettersConnectionError(`No answer from ${new URL(request.url).pathname} after ${attempt + 1} attempt(s): ${String(error)}`, error, key)
        }
        await sleep(backoff)
        continue
      }
      if (attempt >= options.retries || !isRetryable(request, response.status)) return response
      // A server that asks for a longer wait than the client will make gets its answer back.
      const asked = retryAfterMs(response)
      if (asked !== undefined && asked > options.maxRetryDelayMs) return response
      await response.body?.cancel()
      await sleep(asked ?? backoff)
    }
  }
}

/** The methods that change nothing, which the API does not ask a CSRF token for. */
const SAFE_METHODS = new Set(['GET', 'HEAD'])

/**
 * Sets the key (when there is one), the CSRF token on every request that may change something
 * (when there is one), and, on every POST (every creation), an Idempotency-Key unless the
 * caller gave one.
 */
const headersMiddleware = ({ apiKey, csrfToken }: Pick<ClientOptions, 'apiKey' | 'csrfToken'>): Middleware => ({
  onRequest({ request }) {
    if (apiKey !== undefined) request.headers.set('x-api-key', apiKey)
    if (csrfToken && !SAFE_METHODS.has(request.method)) {
      const token = csrfToken()
      if (token !== undefined) request.headers.set('x-csrf-token', token)
    }
    if (request.method === 'POST' && !request.headers.has('idempotency-key')) request.headers.set('idempotency-key', newIdempotencyKey())
    return request
  },
})

/** Turns every error answer into a thrown LettersApiError, so `data` is always there on success. */
const errorsMiddleware: Middleware = {
  async onResponse({ request, response }) {
    if (response.ok) return undefined
    const body = (await response
      .clone()
      .json()
      .catch(() => undefined)) as { error?: unknown; message?: unknown; requestId?: unknown } | undefined
    throw new LettersApiError(
      response.status,
      typeof body?.error === 'string' ? body.error : response.statusText,
      typeof body?.message === 'string' ? body.message : `HTTP ${response.status}`,
      typeof body?.requestId === 'string' ? body.requestId : (response.headers.get('x-request-id') ?? undefined),
      request.headers.get('idempotency-key') ?? undefined,
    )
  },
}

/**
 * A typed client of every public route: `client.GET('/cards/{cardId}', { params: { path: { cardId } } })`,
 * `client.POST('/single', { body })`… Paths, parameters, bodies and answers come from the
 * generated types (src/generated/openapi.ts); an error answer is thrown as LettersApiError.
 */
export function createClient(options: ClientOptions): LettersClient {
  const fetchOnce = options.fetch ?? ((request: Request) => globalThis.fetch(request))
  const client = createFetchClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    // fetch's own default, written down: in session mode the cookie goes with every request to
    // the dashboard's own origin, and never to another one.
    credentials: 'same-origin',
    fetch: retryingFetch(
      {
        retries: options.retries ?? 3,
        retryDelayMs: options.retryDelayMs ?? 500,
        maxRetryDelayMs: options.maxRetryDelayMs ?? 30_000,
        timeoutMs: options.timeoutMs ?? 35_000,
      },
      fetchOnce,
    ),
  })
  client.use(headersMiddleware(options), errorsMiddleware)
  return withIdempotencyKeys(client)
}

/** The routes that take a POST. */
type PostPath = { [Path in keyof paths]: paths[Path] extends { post: object } ? Path : never }[keyof paths]

/**
 * POST with the Idempotency-Key in sight: `idempotencyKey` sets it (else the one in
 * `params.header`, else a new UUID), the answer carries the key it was sent with, and so does
 * every error thrown (LettersApiError, LettersConnectionError): keep it to call again safely.
 */
type KeyedPost = <Path extends PostPath, Init extends MaybeOptionalInit<paths[Path], 'post'>>(
  url: Path,
  init: Init & { idempotencyKey?: string },
) => Promise<FetchResponse<paths[Path]['post'], Init, `${string}/${string}`> & { idempotencyKey: string }>

export type LettersClient = Omit<Client<paths>, 'POST'> & { POST: KeyedPost }

function withIdempotencyKeys(client: Client<paths>): LettersClient {
  const post = client.POST.bind(client) as (url: string, init: Record<string, unknown>) => Promise<Record<string, unknown>>
  const POST = async (url: string, init: { idempotencyKey?: string; params?: { header?: Record<string, unknown> } } & Record<string, unknown>) => {
    const { idempotencyKey, ...rest } = init
    const given = rest.params?.header?.['idempotency-key']
    const key = idempotencyKey ?? (typeof given === 'string' ? given : newIdempotencyKey())
    const params = { ...rest.params, header: { ...rest.params?.header, 'idempotency-key': key } }
    try {
      return { ...(await post(url, { ...rest, params })), idempotencyKey: key }
    } catch (error) {
      if (error instanceof LettersApiError) error.idempotencyKey ??= key
      throw error
    }
  }
  return Object.assign(Object.create(client) as Client<paths>, { POST }) as unknown as LettersClient
}
