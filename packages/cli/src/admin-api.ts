/**
 * The admin API over HTTP, as an operator's machine reaches it: `Authorization: Bearer
 * <ADMIN_TOKEN>`, JSON in and out (but for an artwork upload, which sends the file as it is).
 * Every failure becomes a CliError whose message, in Spanish, is what the operator reads: the
 * API's own `message` when it answered one.
 */

/** A failure the CLI reports with its message and exits with `exitCode`. */
export class CliError extends Error {
  override name = 'CliError'
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message)
  }
}

/** The API answered an error: its status and its Spanish `message`. */
export class ApiError extends CliError {
  override name = 'ApiError'
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(`Error ${status}: ${message}`)
  }
}

/** An answer of the API: its JSON as text, exactly as it came (for --json), and parsed. */
export interface ApiAnswer<Body> {
  status: number
  text: string
  body: Body
}

/** How long one request may take before the operator is told the gateway does not answer. */
const REQUEST_TIMEOUT_MS = 30_000
/**
 * An upload is checked and made ready to print before the API answers (a PDF rasterized, a
 * preview drawn): a file of up to 20 MB takes longer than a plain request.
 */
const UPLOAD_TIMEOUT_MS = 120_000

export interface AdminApiSettings {
  /** LETTERS_URL: where the gateway listens. */
  baseUrl: URL
  /** ADMIN_TOKEN: the gateway's admin token. */
  token: string
}

/** The reason Node gives for a request that never got an answer (ECONNREFUSED, ENOTFOUND…). */
function networkReason(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause
  if (typeof cause?.code === 'string') return cause.code
  if (typeof cause?.message === 'string') return cause.message
  return error instanceof Error ? error.message : String(error)
}

export class AdminApi {
  constructor(private readonly settings: AdminApiSettings) {}

  get<Body>(path: string) {
    return this.request<Body>('GET', path)
  }

  post<Body>(path: string, body: unknown = {}) {
    return this.request<Body>('POST', path, body)
  }

  patch<Body>(path: string, body: unknown) {
    return this.request<Body>('PATCH', path, body)
  }

  delete(path: string) {
    return this.request<null>('DELETE', path)
  }

  /** PUT of a file's bytes as they are, with its Content-Type: an artwork upload. */
  upload<Body>(path: string, data: Uint8Array, contentType: string) {
    return this.send<Body>('PUT', path, { data, contentType }, UPLOAD_TIMEOUT_MS)
  }

  /** `path` is the route below the gateway's root, its segments already encoded (see `segment`). */
  request<Body>(method: string, path: string, body?: unknown): Promise<ApiAnswer<Body>> {
    return this.send<Body>(method, path, body === undefined ? undefined : { data: JSON.stringify(body), contentType: 'application/json' }, REQUEST_TIMEOUT_MS)
  }

  private async send<Body>(
    method: string,
    path: string,
    body: { data: string | Uint8Array; contentType: string } | undefined,
    timeoutMs: number,
  ): Promise<ApiAnswer<Body>> {
    const url = new URL(path.replace(/^\//, ''), this.settings.baseUrl.href.endsWith('/') ? this.settings.baseUrl : `${this.settings.baseUrl.href}/`)
    let response: Response
    try {
      response = await fetch(url, {
        method,
        headers: { authorization: `Bearer ${this.settings.token}`, ...(body === undefined ? {} : { 'content-type': body.contentType }) },
        ...(body === undefined ? {} : { body: body.data }),
        signal: AbortSignal.timeout(timeoutMs),
      })
    } catch (error) {
      if (error instanceof DOMException && error.name === 'TimeoutError') {
        throw new CliError(`El gateway en ${this.settings.baseUrl.origin} no respondió en ${timeoutMs / 1000} s`)
      }
      throw new CliError(
        `No se puede conectar con el gateway en ${this.settings.baseUrl.origin} (${networkReason(error)}): ¿está en marcha? Revisa LETTERS_URL`,
      )
    }
    const text = await response.text()
    const parsed = parseJson(text)
    if (!response.ok) {
      const message = (parsed as { message?: unknown } | undefined)?.message
      if (typeof message === 'string') throw new ApiError(response.status, message)
      throw new CliError(
        `El gateway en ${this.settings.baseUrl.origin} respondió ${response.status} sin un mensaje de error: ¿es LETTERS_URL la dirección del gateway?`,
      )
    }
    if (text !== '' && parsed === undefined) {
      throw new CliError(
        `El gateway en ${this.settings.baseUrl.origin} respondió ${response.status} con algo que no es JSON: ¿es LETTERS_URL la dirección del gateway?`,
      )
    }
    return { status: response.status, text, body: (parsed ?? null) as Body }
  }
}

function parseJson(text: string): unknown {
  try {
    return text === '' ? undefined : (JSON.parse(text) as unknown)
  } catch {
    return undefined
  }
}

/**
 * A value as one segment of a route, so that an id typed by hand cannot reach another route:
 * encoded, and never `.` or `..`, which URLs resolve (encoded or not) into the route above. The
 * API judges the id itself.
 */
export function segment(value: string): string {
  if (value === '.' || value === '..') throw new CliError(`'${value}' no es un id válido`)
  return encodeURIComponent(value)
}
