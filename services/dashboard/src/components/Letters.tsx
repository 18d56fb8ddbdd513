import { Link } from 'react-router'
import type { CardSummary } from '../api'
import { countryName } from '../countries'
import { formatCredits, formatDateTime } from '../format'
import { statusName } from '../labels'

/** A status as a coloured label: the colour is a hint, the word says it. */
export function StatusBadge({ status }: { status: string }) {
  return <span className={`badge badge-${status}`}>{statusName(status)}</span>
}

/** Who a letter is for, or that this is no longer known (its personal data was erased). */
export function recipientName(card: Pick<CardSummary, 'recipient' | 'personalDataErasedAt'>): string {
  const name = `${card.recipient.name} ${card.recipient.surname}`.trim()
  return name || (card.personalDataErasedAt ? 'Datos borrados' : 'Sin nombre')
}

export function recipientPlace(card: Pick<CardSummary, 'recipient'>): string {
  const city = card.recipient.city
  return card.recipient.country && card.recipient.country !== 'ES' ? [city, countryName(card.recipient.country)].filter(Boolean).join(', ') : city || '—'
}

/** Letters as a table: recipient (the link to the letter), city, status, date and cost. */
export function LettersTable({ cards, caption }: { cards: CardSummary[]; caption: string }) {
  return (
    <div className="table-scroll" role="region" aria-label={caption} tabIndex={0}>
      <table>
        <caption className="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Destinatario</th>
            <th scope="col">Ciudad</th>
            <th scope="col">Estado</th>
            <th scope="col">Fecha</th>
            <th scope="col" className="numeric">
              Coste
            </th>
          </tr>
        </thead>
        <tbody>
          {cards.map((card) => (
            <tr key={card.id}>
              <td className="cell-title">
                <Link to={`/cartas/${card.id}`}>{recipientName(card)}</Link>
                {!card.livemode && <span className="tag">Prueba</span>}
              </td>
              <td data-label="Ciudad">{recipientPlace(card)}</td>
              <td data-label="Estado">
                <StatusBadge status={card.status} />
              </td>
              <td className="nowrap" data-label="Fecha">
                {formatDateTime(card.createdAt)}
              </td>
              <td className="numeric" data-label="Coste">
                {formatCredits(card.cost)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}
