import { Link } from 'react-router'
import { movementsCsvUrl, useBalance, useMovements } from '../api'
import { Page } from '../components/Page'
import { ErrorBox, LoadMore, Loading, Notice } from '../components/Status'
import { formatCredits, formatDateTime } from '../format'
import { movementKindNames } from '../labels'

export default function BalancePage() {
  const balance = useBalance()
  const movements = useMovements()
  const rows = movements.data?.pages.flatMap((page) => page.data) ?? []

  return (
    <Page title="Saldo">
      <section className="card">
        <h2 id="balance-now">Saldo disponible</h2>
        {balance.isPending ? (
          <Loading />
        ) : balance.error ? (
          <ErrorBox error={balance.error} />
        ) : (
          <>
            <p className="big-number">{formatCredits(balance.data.balance)}</p>
            {balance.data.lowBalance && (
              <Notice kind="warning">
                <p>Te quedan pocos créditos. Cuando se acaben, las cartas nuevas no se podrán enviar: habla con nosotros para recargar.</p>
              </Notice>
            )}
          </>
        )}
      </section>

      <section>
        <h2 id="balance-movements">Movimientos</h2>
        <p>
          <a href={movementsCsvUrl} download="movimientos.csv" className="button-link">
            Descargar CSV
          </a>
        </p>
        {movements.isPending ? (
          <Loading />
        ) : movements.error ? (
          <ErrorBox error={movements.error} />
        ) : rows.length === 0 ? (
          <p>Todavía no hay movimientos.</p>
        ) : (
          <>
            <div className="table-scroll" role="region" aria-label="Movimientos del saldo" tabIndex={0}>
              <table>
                <caption className="visually-hidden">Movimientos del saldo, del más reciente al más antiguo</caption>
                <thead>
                  <tr>
                    <th scope="col">Fecha</th>
                    <th scope="col">Concepto</th>
                    <th scope="col">Motivo</th>
                    <th scope="col" className="numeric">
                      Importe
                    </th>
                    <th scope="col" className="numeric">
                      Saldo después
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {rows.map((movement) => {
                    // Signed by the API: a charge is negative.
                    const amount = movement.amount
                    return (
                      <tr key={movement.id}>
                        <td className="nowrap" data-label="Fecha">
                          {formatDateTime(movement.createdAt)}
                        </td>
                        <td data-label="Concepto">
                          {movementKindNames[movement.kind] ?? movement.kind}
                          {movement.cardId && (
                            <>
                              {' · '}
                              <Link to={`/cartas/${movement.cardId}`}>ver carta</Link>
                            </>
                          )}
                        </td>
                        <td data-label="Motivo">{movement.reason || '—'}</td>
                        <td className={`numeric ${amount < 0 ? 'amount-out' : 'amount-in'}`} data-label="Importe">
                          {amount > 0 ? '+' : ''}
                          {formatCredits(amount)}
                        </td>
                        <td className="numeric" data-label="Saldo después">
                          {formatCredits(movement.balanceAfter)}
                        </td>
                      </tr>
                    )
                  })}
                </tbody>
              </table>
            </div>
            <LoadMore hasMore={movements.hasNextPage} loading={movements.isFetchingNextPage} onClick={() => void movements.fetchNextPage()} />
          </>
        )}
      </section>
    </Page>
  )
}
