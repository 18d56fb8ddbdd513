import { useState, type FormEvent } from 'react'
import { Link, useSearchParams } from 'react-router'
import { useCampaigns, useCards, type CardFilters } from '../api'
import { Field } from '../components/Field'
import { LettersTable } from '../components/Letters'
import { Page } from '../components/Page'
import { ErrorBox, LoadMore, Loading } from '../components/Status'
import { formatCount, startOfDay, startOfNextDay } from '../format'
import { letterStatuses, statusName, type LetterStatus } from '../labels'

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
    </Page>
  )
}
