import { useState, type FormEvent } from 'react'
import { Link } from 'react-router'
import {
  useApiKeys,
  useCreateApiKey,
  useCreateWebhook,
  useDeleteWebhook,
  useDeliveries,
  useEvents,
  useRetryDelivery,
  useRevokeApiKey,
  useTestWebhook,
  useWebhooks,
  type ApiKey,
  type WebhookEndpoint,
} from '../api'
import { ConfirmDialog, OneTimeSecret } from '../components/Dialog'
import { Field } from '../components/Field'
import { Page } from '../components/Page'
import { ErrorBox, LoadMore, Loading, Notice } from '../components/Status'
import { formatDateTime } from '../format'
import { deliveryErrorNames, deliveryOutcomeNames, eventTypeName, letterEventTypes } from '../labels'

const modeNames = { live: 'Real', test: 'Pruebas' } as const

export default function DevelopersPage() {
  return (
    <Page title="Desarrolladores" lead="Para conectar tu tienda o tu CRM: claves de la API, avisos automáticos (webhooks) y el registro de eventos.">
      <ApiKeys />
      <Webhooks />
      <Events />
    </Page>
  )
}

function ApiKeys() {
  const keys = useApiKeys()
  const create = useCreateApiKey()
  const revoke = useRevokeApiKey()
  const [mode, setMode] = useState<'live' | 'test'>('live')
  const [revoking, setRevoking] = useState<ApiKey>()

  const submit = (event: FormEvent) => {
    event.preventDefault()
    create.mutate(mode)
  }

  return (
    <section className="stack">
      <h2 id="dev-keys">Claves de la API</h2>
      <p className="hint">Una clave real crea cartas que se cobran y se envían; una de pruebas crea cartas que nunca se imprimen ni se cobran.</p>
      {keys.isPending ? (
        <Loading />
      ) : keys.error ? (
        <ErrorBox error={keys.error} />
      ) : keys.data.length === 0 ? (
        <p>No hay claves.</p>
      ) : (
        <div className="table-scroll" role="region" aria-label="Claves de la API" tabIndex={0}>
          <table>
            <caption className="visually-hidden">Claves de la API</caption>
            <thead>
              <tr>
                <th scope="col">Clave</th>
                <th scope="col">Modo</th>
                <th scope="col">Creada</th>
                <th scope="col">
                  <span className="visually-hidden">Acciones</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {keys.data.map((key) => (
                <tr key={key.id}>
                  <td className="mono" data-label="Clave">
                    {key.prefix}…
                  </td>
                  <td data-label="Modo">{modeNames[key.mode] ?? key.mode}</td>
                  <td className="nowrap" data-label="Creada">
                    {formatDateTime(key.createdAt)}
                  </td>
                  <td className="cell-actions">
                    <button type="button" className="button-secondary button-small" onClick={() => setRevoking(key)}>
                      Revocar
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}

      <form onSubmit={submit} className="inline-form">
        <Field label="Modo de la clave nueva">
          {(props) => (
            <select {...props} value={mode} onChange={(event) => setMode(event.target.value as 'live' | 'test')}>
              <option value="live">Real (live)</option>
              <option value="test">Pruebas (test)</option>
            </select>
          )}
        </Field>
        <button type="submit" disabled={create.isPending}>
          Crear clave
        </button>
      </form>
      <ErrorBox error={create.error} />
      {create.data && (
        <div role="status">
          <Notice kind="success">
            <p>
              Clave {modeNames[create.data.mode].toLowerCase()} creada. <strong>Cópiala ahora: no se volverá a mostrar.</strong>
            </p>
            <OneTimeSecret label="Clave nueva" value={create.data.apiKey} />
          </Notice>
        </div>
      )}

      <ConfirmDialog
        open={revoking !== undefined}
        title="¿Revocar esta clave?"
        confirmLabel="Sí, revocar"
        danger
        busy={revoke.isPending}
        error={revoke.error}
        onClose={() => {
          setRevoking(undefined)
          revoke.reset()
        }}
        onConfirm={() => revoking && revoke.mutate(revoking.id, { onSuccess: () => setRevoking(undefined) })}
      >
        <p>
          La clave <span className="mono">{revoking?.prefix}…</span> dejará de funcionar en el momento: lo que la use (tu tienda, tu CRM) no podrá enviar más
          cartas con ella.
        </p>
      </ConfirmDialog>
    </section>
  )
}

/** The letter events an endpoint may subscribe to (webhookEventTypes in the contracts). */
const eventTypes = letterEventTypes

function Webhooks() {
  const webhooks = useWebhooks()
  const create = useCreateWebhook()
  const [adding, setAdding] = useState(false)
  const [url, setUrl] = useState('')
  const [events, setEvents] = useState<ReadonlySet<string>>(new Set(eventTypes))

  const submit = (event: FormEvent) => {
    event.preventDefault()
    const all = events.size === eventTypes.length
    create.mutate(
      { url: url.trim(), ...(all ? {} : { events: eventTypes.filter((type) => events.has(type)) }) },
      {
        onSuccess: () => {
          setAdding(false)
          setUrl('')
          setEvents(new Set(eventTypes))
        },
      },
    )
  }

  return (
    <section className="stack">
      <h2 id="dev-webhooks">Webhooks</h2>
      <p className="hint">Avisos que enviamos a tu sistema cada vez que una carta cambia de estado o se escanea su código QR, firmados con un secreto.</p>
      {create.data && (
        <div role="status">
          <Notice kind="success">
            <p>
              Endpoint añadido: <span className="mono break">{create.data.url}</span>. <strong>Copia el secreto ahora: no se volverá a mostrar.</strong>
            </p>
            <OneTimeSecret label="Secreto para verificar las firmas" value={create.data.secret} />
            <p>Recibirá: {create.data.events.map(eventTypeName).join(', ')}.</p>
          </Notice>
        </div>
      )}
      {!adding ? (
        <p>
          <button
            type="button"
            onClick={() => {
              create.reset()
              setAdding(true)
            }}
          >
            Añadir endpoint
          </button>
        </p>
      ) : (
        <form onSubmit={submit} className="card stack" aria-labelledby="dev-webhook-new">
          <h3 id="dev-webhook-new">Endpoint nuevo</h3>
          <Field label="URL" hint="La dirección https de tu sistema que recibirá los avisos.">
            {(props) => (
              <input
                {...props}
                type="url"
                inputMode="url"
                required
                value={url}
                onChange={(event) => setUrl(event.target.value)}
                placeholder="https://"
                autoFocus
              />
            )}
          </Field>
          <fieldset>
            <legend>Eventos que recibirá</legend>
            <div className="checkbox-grid">
              {eventTypes.map((type) => (
                <label key={type} className="checkbox">
                  <input
                    type="checkbox"
                    checked={events.has(type)}
                    onChange={(event) => {
                      const next = new Set(events)
                      if (event.target.checked) next.add(type)
                      else next.delete(type)
                      setEvents(next)
                    }}
                  />
                  {eventTypeName(type)}
                </label>
              ))}
            </div>
          </fieldset>
          <ErrorBox error={create.error} />
          <div className="actions">
            <button type="submit" disabled={create.isPending || events.size === 0}>
              Guardar
            </button>
            <button type="button" className="button-secondary" onClick={() => setAdding(false)}>
              Cancelar
            </button>
          </div>
          {events.size === 0 && <p className="field-error">Elige al menos un evento.</p>}
        </form>
      )}

      {webhooks.isPending ? (
        <Loading />
      ) : webhooks.error ? (
        <ErrorBox error={webhooks.error} />
      ) : webhooks.data.length === 0 ? (
        <p>No hay endpoints.</p>
      ) : (
        webhooks.data.map((endpoint) => <Endpoint key={endpoint.id} endpoint={endpoint} />)
      )}
    </section>
  )
}

function Endpoint({ endpoint }: { endpoint: WebhookEndpoint }) {
  const deliveries = useDeliveries(endpoint.id)
  const retry = useRetryDelivery(endpoint.id)
  const test = useTestWebhook()
  const remove = useDeleteWebhook()
  const [removing, setRemoving] = useState(false)
  const [retried, setRetried] = useState<ReadonlySet<string>>(new Set())
  const attempts = deliveries.data?.pages.flatMap((page) => page.data) ?? []
  const headingId = `endpoint-${endpoint.id}`
  // Newest first: the first attempt listed for an event is its latest, the one worth retrying.
  const seen = new Set<string>()

  return (
    <article className="card stack" aria-labelledby={headingId}>
      <h3 id={headingId} className="mono break endpoint-url">
        {endpoint.url}
      </h3>
      <p>
        {endpoint.disabled ? <span className="badge badge-failed">Desactivado tras muchos fallos</span> : <span className="badge badge-mailed">Activo</span>}{' '}
        {!endpoint.livemode && <span className="tag">Pruebas</span>}
        <span className="hint">
          {' '}
          Desde {formatDateTime(endpoint.createdAt)} ·{' '}
          {endpoint.events.length === eventTypes.length ? 'todos los eventos' : endpoint.events.map(eventTypeName).join(', ')}
        </span>
      </p>
      <div className="actions">
        <button type="button" className="button-secondary" onClick={() => test.mutate(endpoint.id)} disabled={test.isPending || endpoint.disabled}>
          Enviar prueba
        </button>
        <button type="button" className="button-secondary" onClick={() => setRemoving(true)}>
          Eliminar
        </button>
      </div>
      {test.isSuccess && <p role="status">Prueba en camino: aparecerá abajo en unos segundos.</p>}
      <ErrorBox error={test.error ?? retry.error} />

      <h4>Entregas recientes</h4>
      {deliveries.isPending ? (
        <Loading />
      ) : deliveries.error ? (
        <ErrorBox error={deliveries.error} />
      ) : attempts.length === 0 ? (
        <p>Aún no se ha enviado nada a este endpoint.</p>
      ) : (
        <>
          <div className="table-scroll" role="region" aria-label={`Entregas a ${endpoint.url}`} tabIndex={0}>
            <table>
              <caption className="visually-hidden">Entregas a {endpoint.url}</caption>
              <thead>
                <tr>
                  <th scope="col">Fecha</th>
                  <th scope="col">Evento</th>
                  <th scope="col" className="numeric">
                    Intento
                  </th>
                  <th scope="col">Respuesta</th>
                  <th scope="col">Resultado</th>
                  <th scope="col">
                    <span className="visually-hidden">Acciones</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {attempts.map((attempt) => {
                  const latest = !seen.has(attempt.eventId)
                  seen.add(attempt.eventId)
                  // Only a delivery that did not get through (failed, or waiting for its next attempt) is worth sending again.
                  const retryable = latest && !endpoint.disabled && attempt.outcome !== 'delivered'
                  return (
                    <tr key={`${attempt.eventId}-${attempt.attempt}`}>
                      <td className="nowrap" data-label="Fecha">
                        {formatDateTime(attempt.at)}
                      </td>
                      <td data-label="Evento">{eventTypeName(attempt.type)}</td>
                      <td className="numeric" data-label="Intento">
                        {attempt.attempt}
                      </td>
                      <td data-label="Respuesta">
                        {attempt.statusCode !== null ? `HTTP ${attempt.statusCode}` : (deliveryErrorNames[attempt.error ?? ''] ?? 'Sin respuesta')}
                      </td>
                      <td data-label="Resultado">
                        {deliveryOutcomeNames[attempt.outcome] ?? attempt.outcome}
                        {attempt.nextAttemptAt && <span className="hint"> · próximo intento {formatDateTime(attempt.nextAttemptAt)}</span>}
                      </td>
                      <td className="cell-actions">
                        {retryable &&
                          (retried.has(attempt.eventId) ? (
                            <span role="status">Reenviada</span>
                          ) : (
                            <button
                              type="button"
                              className="button-secondary button-small"
                              disabled={retry.isPending}
                              onClick={() => retry.mutate(attempt.eventId, { onSuccess: () => setRetried((current) => new Set(current).add(attempt.eventId)) })}
                            >
                              Reintentar
                            </button>
                          ))}
                      </td>
                    </tr>
                  )
                })}
              </tbody>
            </table>
          </div>
          <LoadMore hasMore={deliveries.hasNextPage} loading={deliveries.isFetchingNextPage} onClick={() => void deliveries.fetchNextPage()} />
        </>
      )}

      <ConfirmDialog
        open={removing}
        title="¿Eliminar este endpoint?"
        confirmLabel="Sí, eliminar"
        danger
        busy={remove.isPending}
        error={remove.error}
        onClose={() => {
          setRemoving(false)
          remove.reset()
        }}
        onConfirm={() => remove.mutate(endpoint.id, { onSuccess: () => setRemoving(false) })}
      >
        <p>
          Dejaremos de enviar avisos a <span className="mono break">{endpoint.url}</span>.
        </p>
      </ConfirmDialog>
    </article>
  )
}

function Events() {
  const events = useEvents()
  const rows = events.data?.pages.flatMap((page) => page.data) ?? []
  return (
    <section className="stack">
      <h2 id="dev-events">Eventos</h2>
      <p className="hint">Cada cambio de estado de tus cartas de los últimos 30 días, los haya recibido un webhook o no.</p>
      {events.isPending ? (
        <Loading />
      ) : events.error ? (
        <ErrorBox error={events.error} />
      ) : rows.length === 0 ? (
        <p>No hay eventos en los últimos 30 días.</p>
      ) : (
        <>
          <div className="table-scroll" role="region" aria-label="Eventos" tabIndex={0}>
            <table>
              <caption className="visually-hidden">Eventos, del más reciente al más antiguo</caption>
              <thead>
                <tr>
                  <th scope="col">Fecha</th>
                  <th scope="col">Evento</th>
                  <th scope="col">Carta</th>
                  <th scope="col">Id del evento</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((event) => (
                  <tr key={event.id}>
                    <td className="nowrap" data-label="Fecha">
                      {formatDateTime(event.occurredAt)}
                    </td>
                    <td data-label="Evento">{eventTypeName(event.type)}</td>
                    <td data-label="Carta">
                      <Link to={`/cartas/${event.data.id}`}>{`${event.data.recipient.name} ${event.data.recipient.surname}`.trim() || event.data.code}</Link>
                    </td>
                    <td className="mono small event-id cell-stacked" data-label="Id del evento" title={event.id}>
                      {event.id}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <LoadMore hasMore={events.hasNextPage} loading={events.isFetchingNextPage} onClick={() => void events.fetchNextPage()} />
        </>
      )}
    </section>
  )
}
