import { useEffect, useState, type FormEvent } from 'react'
import { Link, useLocation, useSearchParams } from 'react-router'
import { useCampaigns, useCards, useLiftSuppression, useSuppressions, type CardFilters, type Suppression } from '../api'
import { countryName } from '../countries'
import { ConfirmDialog } from '../components/Dialog'
import { Field } from '../components/Field'
import { LettersTable } from '../components/Letters'
import { Page } from '../components/Page'
import { ErrorBox, LoadMore, Loading } from '../components/Status'
import { formatCount, formatDateTime, startOfDay, startOfNextDay } from '../format'
import { letterStatuses, returnReasonName, statusName, type LetterStatus } from '../labels'
import { useCan } from '../session'

/** The filters as the address bar keeps them (Spanish words, so a shared link reads well). */
interface FilterForm {
  estado: string
  campana: string
  desde: string
  hasta: string
  buscar: string
}
const FILTER_KEYS = ['estado', 'campana', 'desde', 'hasta', 'buscar'] as const

function filtersOf(form: FilterForm): CardFilters {
  const filters: CardFilters = {}
  if ((letterStatuses as readonly string[]).includes(form.estado)) filters.status = form.estado as LetterStatus
  if (form.campana) filters.campaignId = form.campana
  const from = startOfDay(form.desde)
  if (from) filters.from = from
  const to = startOfNextDay(form.hasta)
  if (to) filters.to = to
  const search = form.buscar.trim()
  if (search) filters.search = search.slice(0, 100)
  return filters
}

export default function LettersPage() {
  const [params, setParams] = useSearchParams()
  const applied: FilterForm = { estado: '', campana: '', desde: '', hasta: '', buscar: '' }
  for (const key of FILTER_KEYS) applied[key] = params.get(key) ?? ''
  const [form, setForm] = useState<FilterForm>(applied)
  // Back and forward change the address without leaving the page: the form follows it.
  const query = params.toString()
  const [shownQuery, setShownQuery] = useState(query)
  if (shownQuery !== query) {
    setShownQuery(query)
    setForm(applied)
  }
  const campaigns = useCampaigns()
  const cards = useCards(filtersOf(applied))

  const set = (key: keyof FilterForm) => (event: { target: { value: string } }) => setForm((current) => ({ ...current, [key]: event.target.value }))

  const submit = (event: FormEvent) => {
    event.preventDefault()
    const next = new URLSearchParams()
    for (const key of FILTER_KEYS) if (form[key].trim()) next.set(key, form[key].trim())
    setParams(next)
  }

  const filtered = FILTER_KEYS.some((key) => applied[key] !== '')
  const rows = cards.data?.pages.flatMap((page) => page.data) ?? []

  return (
    <Page title="Cartas">
      <form className="filters" onSubmit={submit} aria-label="Filtrar cartas">
        <Field label="Estado">
          {(props) => (
            <select {...props} value={form.estado} onChange={set('estado')}>
              <option value="">Todos</option>
              {letterStatuses.map((status) => (
                <option key={status} value={status}>
                  {statusName(status)}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Campaña">
          {(props) => (
            <select {...props} value={form.campana} onChange={set('campana')}>
              <option value="">Todas</option>
              {(campaigns.data ?? []).map((campaign) => (
                <option key={campaign.id} value={campaign.id}>
                  {campaign.name}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Desde">{(props) => <input {...props} type="date" value={form.desde} onChange={set('desde')} />}</Field>
        <Field label="Hasta">{(props) => <input {...props} type="date" value={form.hasta} onChange={set('hasta')} />}</Field>
        <Field label="Buscar" hint="Nombre o ciudad del destinatario" className="field-wide">
          {(props) => <input {...props} type="search" maxLength={100} value={form.buscar} onChange={set('buscar')} />}
        </Field>
        <div className="actions">
          <button type="submit">Filtrar</button>
          {filtered && (
            <Link to="/cartas" className="button-link">
              Quitar filtros
            </Link>
          )}
        </div>
      </form>

      {cards.isPending ? (
        <Loading />
      ) : cards.error ? (
        <ErrorBox error={cards.error} />
      ) : rows.length === 0 ? (
        <p>{filtered ? 'Ninguna carta cumple estos filtros.' : 'Todavía no hay cartas.'}</p>
      ) : (
        <>
          <p className="hint" role="status">
            {cards.hasNextPage ? `Se muestran las ${rows.length} más recientes.` : formatCount(rows.length, 'carta', 'cartas')}
          </p>
          <LettersTable cards={rows} caption="Cartas, de la más reciente a la más antigua" />
          <LoadMore hasMore={cards.hasNextPage} loading={cards.isFetchingNextPage} onClick={() => void cards.fetchNextPage()} />
        </>
      )}

      <ReturnedAddresses />
    </Page>
  )
}

const RETURNED_ADDRESSES = 'direcciones-devueltas'

/**
 * The account's suppression list: the addresses a letter came back from, to which new letters are
 * refused. Shown only when it has entries (most accounts never see it); someone who may send
 * letters can take an address off it. The API gives only an address's postal code and country (its street is kept as a hash).
 */
function ReturnedAddresses() {
  const entries = useSuppressions()
  const lift = useLiftSuppression()
  const canSend = useCan('send')
  const [asking, setAsking] = useState<Suppression>()
  const { hash } = useLocation()
  const rows = entries.data?.pages.flatMap((page) => page.data) ?? []
  const shown = rows.length > 0
  // Reached from a returned letter's page (/cartas#direcciones-devueltas): the section is drawn once its entries arrive.
  useEffect(() => {
    if (shown && hash === `#${RETURNED_ADDRESSES}`) document.getElementById(RETURNED_ADDRESSES)?.scrollIntoView()
  }, [shown, hash])
  if (entries.error) return <ErrorBox error={entries.error} />
  if (!shown) return null

  const close = () => {
    setAsking(undefined)
    lift.reset()
  }
  const place = (entry: Suppression) => `${entry.zip} (${countryName(entry.country)})`

  return (
    <section>
      <h2 id={RETURNED_ADDRESSES}>Direcciones devueltas</h2>
      <p className="hint">
        Correos nos devolvió una carta enviada a estas direcciones: las cartas nuevas a ellas se rechazan, salvo que las quites de la lista. De cada una se
        muestran solo el código postal y el país.
      </p>
      <div className="table-scroll" role="region" aria-label="Direcciones devueltas" tabIndex={0}>
        <table className="suppressions">
          <caption className="visually-hidden">Direcciones devueltas, de la más reciente a la más antigua</caption>
          <thead>
            <tr>
              <th scope="col">Código postal</th>
              <th scope="col">País</th>
              <th scope="col">Motivo</th>
              <th scope="col">Fecha</th>
              {canSend && (
                <th scope="col">
                  <span className="visually-hidden">Acciones</span>
                </th>
              )}
            </tr>
          </thead>
          <tbody>
            {rows.map((entry) => (
              <tr key={entry.id}>
                <td className="cell-title mono">{entry.zip}</td>
                <td data-label="País">{countryName(entry.country)}</td>
                <td data-label="Motivo">{returnReasonName(entry.reason)}</td>
                <td className="nowrap" data-label="Fecha">
                  {formatDateTime(entry.createdAt)}
                </td>
                {canSend && (
                  <td>
                    <button type="button" className="button-secondary" onClick={() => setAsking(entry)} aria-label={`Quitar de la lista: ${place(entry)}`}>
                      Quitar de la lista
                    </button>
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <LoadMore hasMore={entries.hasNextPage} loading={entries.isFetchingNextPage} onClick={() => void entries.fetchNextPage()} />
      <ConfirmDialog
        open={asking !== undefined}
        title="¿Quitar esta dirección de la lista?"
        confirmLabel="Sí, quitarla"
        busy={lift.isPending}
        error={lift.error}
        onClose={close}
        onConfirm={() => asking && lift.mutate(asking.id, { onSuccess: close })}
      >
        <p>{asking && `Las cartas nuevas a esa dirección (${asking.zip}, ${countryName(asking.country)}) se enviarán de nuevo.`}</p>
        <p>Hazlo solo si sabes que la dirección ya es correcta: si no, la próxima carta también se devolverá.</p>
      </ConfirmDialog>
    </section>
  )
}
