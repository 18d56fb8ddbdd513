/** Seconds a client is told to wait before retrying a request its deadline cut short. */
export const DEADLINE_RETRY_AFTER_SECONDS = 2

/** A request abandoned at its deadline. */
export const requestDeadlineMessage = 'No hemos podido atender la petición a tiempo. Repítela en unos segundos'

/** A creation abandoned at its deadline: nothing of it was stored or charged, and nothing will be. */
export const deadlinePassedMessage =
  'No hemos podido atender la petición a tiempo y no se ha guardado ni cobrado nada. Repítela en unos segundos (con la misma Idempotency-Key, si usaste una)'

/**
 * Whether what the request stores was stored could not be found out (the database went away
 * while committing, or did not answer in time): a blind retry could do it twice, so the message
 * says how to retry safely. Only a request that brought an Idempotency-Key to a route that keeps
 * answers by it (`keyed`) can be retried as it was; any other must be checked first.
 */
export function outcomeUnknownMessage(keyed: boolean, letters?: number): string {
  const what = letters === undefined ? 'la petición se completó' : letters === 1 ? 'la carta quedó guardada' : 'las cartas quedaron guardadas'
  return keyed
    ? `No se ha podido confirmar si ${what}. Repite la petición solo con la misma Idempotency-Key: si se guardó, recibirás la misma respuesta sin nuevo cargo`
    : `No se ha podido confirmar si ${what}. Comprueba si se guardó antes de repetir la petición: repetida tal cual, podría hacerse dos veces`
}
