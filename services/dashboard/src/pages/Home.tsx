import { useState } from 'react'
import { Link } from 'react-router'
import { useBalance, useCardStats, useFailingWebhooks, useRecentCards } from '../api'
import { LettersTable } from '../components/Letters'
import { Page } from '../components/Page'
import { ErrorBox, Loading } from '../components/Status'
import { formatCount, formatCredits } from '../format'
import { letterStatuses, statusWords } from '../labels'
import { permissions, useUser } from '../session'

const DAYS = 30

/** The last 30 days, from the start of that day: fixed when the page opens, so its queries keep one key. */
function lastDays() {
  const now = new Date()
  const from = new Date(now.getFullYear(), now.getMonth(), now.getDate() - DAYS)
  const day = `${from.getFullYear()}-${String(from.getMonth() + 1).padStart(2, '0')}-${String(from.getDate()).padStart(2, '0')}`
  return { from: from.toISOString(), to: now.toISOString(), fromDay: day }
}

export function HomePage() {
  const user = useUser()
  const [period] = useState(lastDays)
  const balance = useBalance()
  const stats = useCardStats(period.from, period.to)
  const recent = useRecentCards(5)
  const isOwner = permissions.manage(user)
  const webhooks = useFailingWebhooks(isOwner)

  const rejected = stats.data?.byStatus.address_rejected ?? 0

  return (
    <Page title="Inicio">
      <div className="grid-2">
        <section className="card">
          <h2 id="home-balance">Saldo</h2>
          {balance.isPending ? (
            <Loading />
          ) : balance.error ? (
            <ErrorBox error={balance.error} />
          ) : (
            <>
              <p className="big-number">{formatCredits(balance.data.balance)}</p>
              <p>
                <Link to="/saldo">Ver movimientos</Link>
              </p>
            </>
          )}
        </section>

        <section className="card">
          <h2 id="home-attention">Necesita tu atención</h2>
          {stats.isPending || balance.isPending || webhooks.isLoading ? (
            <Loading />
          ) : (
            <ul className="attention">
              {balance.data?.lowBalance && (
                <li className="attention-warning">
                  Te quedan pocos créditos ({formatCredits(balance.data.balance)}). <Link to="/saldo">Ver el saldo</Link>
                </li>
              )}
              {rejected > 0 && (
                <li className="attention-warning">
                  {formatCount(rejected, 'carta tiene', 'cartas tienen')} la dirección rechazada en los últimos {DAYS} días.{' '}
                  <Link to={`/cartas?estado=address_rejected&desde=${period.fromDay}`}>Ver esas cartas</Link>
                </li>
              )}
              {webhooks.failing.map((endpoint) => (
                <li key={endpoint.id} className="attention-warning">
                  {endpoint.disabled ? 'Se han dejado de enviar avisos a' : 'Fallan los avisos (webhooks) enviados a'}{' '}
                  <span className="mono break">{endpoint.url}</span>. <Link to="/desarrolladores">Revisar</Link>
                </li>
              ))}
              {!balance.data?.lowBalance && rejected === 0 && webhooks.failing.length === 0 && <li>Todo en orden: no hay nada pendiente.</li>}
            </ul>
          )}
          <ErrorBox error={stats.error ?? webhooks.error} />
        </section>
      </div>

      <section>
        <h2 id="home-stats">Cartas de los últimos {DAYS} días</h2>
        {stats.isPending ? (
          <Loading />
        ) : stats.data ? (
          <>
            <p>
              <strong>{formatCount(stats.data.total, 'carta', 'cartas')}</strong> en total.
            </p>
            <ul className="stat-list">
              {letterStatuses
                .filter((status) => (stats.data.byStatus[status] ?? 0) > 0)
                .map((status) => (
                  <li key={status}>
                    <Link to={`/cartas?estado=${status}&desde=${period.fromDay}`}>
                      <span className="stat-count">{stats.data.byStatus[status]}</span> {statusWords(status, stats.data.byStatus[status] ?? 0)}
                    </Link>
                  </li>
                ))}
            </ul>
          </>
        ) : null}
      </section>

      <section>
        <h2 id="home-recent">Últimas cartas</h2>
        {recent.isPending ? (
          <Loading />
        ) : recent.error ? (
          <ErrorBox error={recent.error} />
        ) : recent.data.length === 0 ? (
          <p>Todavía no hay cartas.</p>
        ) : (
          <LettersTable cards={recent.data} caption="Últimas cartas" />
        )}
        <p>
          <Link to="/cartas">Ver todas las cartas</Link>
        </p>
      </section>
    </Page>
  )
}
