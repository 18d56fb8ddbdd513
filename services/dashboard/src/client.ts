import { createClient, LettersApiError, LettersConnectionError } from '@letters/sdk'

/** A cookie's value as the browser has it, or undefined. Only `letters_csrf` is readable: the session cookie is HttpOnly. */
export function readCookie(name: string): string | undefined {
  for (const part of document.cookie.split(';')) {
    const [key, ...value] = part.trim().split('=')
    if (key === name) return decodeURIComponent(value.join('='))
  }
  return undefined
}

const session = {
  baseUrl: window.location.origin,
  csrfToken: () => readCookie('letters_csrf'),
  // A person is waiting: a Retry-After longer than 2 s comes back at once as the 429, whose
  // Spanish message the page shows, instead of a button that says "Un momento" for half a minute.
  maxRetryDelayMs: 2000,
}

/**
 * The client of the API, in session mode: no key, the browser sends the session cookie, and
 * every request that changes something carries the CSRF token the server set beside it. One retry:
 * a person is waiting and can press the button again.
 */
export const client = createClient({ ...session, retries: 1 })

/**
 * The client of the requests that carry a password or an invitation's token: never sent again
 * behind the person's back. A 429 (too many tries) is shown at once, and pressing the button
 * again is the person's choice.
 */
export const authClient = createClient({ ...session, retries: 0 })

export { LettersApiError, LettersConnectionError }

/** Whether an error is the API saying the session is over (or never was). */
export const isUnauthorized = (error: unknown) => error instanceof LettersApiError && error.status === 401

/** What to tell a person about an error: the API's Spanish message, or what went wrong on the way. */
export function errorMessage(error: unknown): string {
  if (error instanceof LettersApiError) return error.message
  if (error instanceof LettersConnectionError) return 'No se ha podido conectar con el servidor. Comprueba tu conexión e inténtalo de nuevo.'
  return 'Algo ha fallado. Vuelve a intentarlo dentro de un momento.'
}

const REQUEST_FIELDS = /(?:El campo|El parámetro|La cabecera) '([^']+)'/

/**
 * The request field an API error is about: the `field` of the error body when the API sends one,
 * else the field its validation message names ("El campo 'zip' …"); undefined for the others.
 */
export function errorField(error: unknown): string | undefined {
  if (!(error instanceof LettersApiError) || error.status !== 400) return undefined
  const field = (error as { field?: unknown }).field
  if (typeof field === 'string' && field) return field
  return REQUEST_FIELDS.exec(error.message)?.[1]
}
