import { useState } from 'react'
import { Link, useLocation, useParams } from 'react-router'
import { proofPageUrl, proofPdfUrl, useCancelCard, useCard, useCardDesign, useCompanyData, useErasePersonalData, useFonts, type Card } from '../api'
import { countryName } from '../countries'
import { ConfirmDialog, Dialog } from '../components/Dialog'
import { recipientName, StatusBadge } from '../components/Letters'
import { Page } from '../components/Page'
import { ErrorBox, Loading, Notice } from '../components/Status'
import { formatCount, formatCredits, formatDateTime } from '../format'
import { cancellableStatuses, erasableStatuses, eventDetailText, inkName, returnReasonName, statusName } from '../labels'
import { useCan } from '../session'

export default function LetterPage() {
  const { cardId = '' } = useParams()
  const card = useCard(cardId)
  if (card.isPending)
    return (
      <Page title="Carta">
        <Loading />
      </Page>
    )
  if (card.error)
    return (
      <Page title="Carta">
        <ErrorBox error={card.error} />
        <p>
          <Link to="/cartas">Volver a las cartas</Link>
        </p>
      </Page>
    )
  return <LetterView card={card.data} />
}

function LetterView({ card }: { card: Card }) {
  const canSend = useCan('send')
  const location = useLocation()
  const justSent = (location.state as { sent?: boolean } | null)?.sent === true
  const [done, setDone] = useState<string | undefined>(justSent ? 'Carta enviada. Aquí puedes seguir su estado.' : undefined)
  const erased = card.personalDataErasedAt !== null

  return (
    <Page title={erased ? `Carta ${card.code}` : `Carta para ${recipientName(card)}`}>
      <p className="letter-status">
        <StatusBadge status={card.status} />
        {!card.livemode && <span className="tag">Carta de prueba</span>}
        <span className="hint">
          Código <span className="mono">{card.code}</span>
        </span>
      </p>
      {card.status === 'returned' && <ReturnNotice card={card} />}
      {done && (
        <div role="status">
          <Notice kind="success">
            <p>{done}</p>
          </Notice>
        </div>
      )}
      {canSend && <LetterActions card={card} onDone={setDone} />}

      <section>
        <h2 id="letter-proof">Cómo se imprimirá</h2>
        {erased ? (
          <p>Los datos personales de esta carta se borraron el {formatDateTime(card.personalDataErasedAt)}, y su prueba con ellos.</p>
        ) : (
          <ProofThumbnails card={card} />
        )}
      </section>

      <div className="grid-2">
        <section>
          <h2 id="letter-address">Dirección</h2>
          <AddressBlock card={card} />
        </section>
        <section>
          <h2 id="letter-details">Detalles</h2>
          <LetterDetails card={card} />
        </section>
      </div>

      {card.tracking && <TrackingSection tracking={card.tracking} />}

      {!erased && card.message && (
        <section>
          <h2 id="letter-message">Mensaje</h2>
          <p className="message">{card.message}</p>
        </section>
      )}

      <section>
        <h2 id="letter-history">Historial</h2>
        <ol className="timeline">
          {[...card.events]
            .sort((a, b) => a.at.localeCompare(b.at))
            .map((event, index) => (
              <li key={`${event.at}-${index}`}>
                <span className="timeline-status">{statusName(event.status)}</span>
                <span className="timeline-date">{formatDateTime(event.at)}</span>
                {event.detail && <span className="timeline-detail">{eventDetailText(event.detail)}</span>}
              </li>
            ))}
        </ol>
      </section>
    </Page>
  )
}

/** A letter the post brought back: when, and why. */
function ReturnNotice({ card }: { card: Card }) {
  return (
    <Notice kind="warning">
      <p className="letter-return">
        Devuelta el {formatDateTime(card.returnedAt)}
        {card.returnReason && ` — ${returnReasonName(card.returnReason)}`}
      </p>
      {card.returnReason && card.returnReason !== 'refused' && (
        <p>
          Su dirección se añadió a las direcciones devueltas: las cartas nuevas a ella se rechazan mientras siga allí.{' '}
          <Link to="/cartas#direcciones-devueltas">Ver las direcciones devueltas</Link>
        </p>
      )}
    </Notice>
  )
}

/**
 * The QR code printed on the card: where it sends whoever scans it, and its counted scans. The
 * destination is shown as text, not a link: a link from here would tell the client's site the
 * dashboard's address, and a person who wants to open it can copy it.
 */
function TrackingSection({ tracking }: { tracking: NonNullable<Card['tracking']> }) {
  return (
    <section>
      <h2 id="letter-tracking">Código QR</h2>
      <dl className="facts facts-compact facts-stack">
        <div>
          <dt>Lleva a</dt>
          <dd className="mono break">{tracking.url}</dd>
        </div>
        {tracking.scans === 0 ? (
          <div>
            <dt>Escaneos</dt>
            <dd>Aún no se ha escaneado</dd>
          </div>
        ) : (
          <>
            <div>
              <dt>Escaneos</dt>
              <dd>{formatCount(tracking.scans, 'escaneo', 'escaneos')}</dd>
            </div>
            <div>
              <dt>Primer escaneo</dt>
              <dd>{formatDateTime(tracking.firstScannedAt)}</dd>
            </div>
            <div>
              <dt>Último escaneo</dt>
              <dd>{formatDateTime(tracking.lastScannedAt)}</dd>
            </div>
          </>
        )}
      </dl>
      <p className="hint">
        Se cuentan las veces que alguien abre el código con el móvil; no las vistas previas de enlaces ni los escaneos seguidos de más de 10 por minuto.
      </p>
    </section>
  )
}

/** Cancel (while the floor has not taken it) and erase (once it is done with), each asked first. */
function LetterActions({ card, onDone }: { card: Card; onDone: (message: string) => void }) {
  const cancel = useCancelCard(card.id)
  const erase = useErasePersonalData(card.id)
  const [asking, setAsking] = useState<'cancel' | 'erase'>()
  const canCancel = cancellableStatuses.includes(card.status)
  const canErase = erasableStatuses.includes(card.status) && card.personalDataErasedAt === null
  if (!canCancel && !canErase) return null

  const close = () => {
    setAsking(undefined)
    cancel.reset()
    erase.reset()
  }

  return (
    <div className="actions">
      {canCancel && (
        <button type="button" className="button-danger" onClick={() => setAsking('cancel')}>
          Cancelar carta
        </button>
      )}
      {canErase && (
        <button type="button" className="button-secondary" onClick={() => setAsking('erase')}>
          Borrar datos personales
        </button>
      )}
      <ConfirmDialog
        open={asking === 'cancel'}
        title="¿Cancelar esta carta?"
        confirmLabel="Sí, cancelar la carta"
        danger
        busy={cancel.isPending}
        error={cancel.error}
        onClose={close}
        onConfirm={() =>
          cancel.mutate(undefined, {
            onSuccess: () => {
              setAsking(undefined)
              onDone(card.livemode ? `Carta cancelada. Se han devuelto ${formatCredits(card.cost)} a tu saldo.` : 'Carta cancelada.')
            },
          })
        }
      >
        <p>No se escribirá ni se enviará.</p>
        <p>
          {card.livemode
            ? `Se devolverán ${formatCredits(card.cost)} a tu saldo.`
            : 'Es una carta de prueba: no se cobró nada, así que no hay créditos que devolver.'}
        </p>
      </ConfirmDialog>
      <ConfirmDialog
        open={asking === 'erase'}
        title="¿Borrar los datos personales?"
        confirmLabel="Sí, borrar los datos"
        danger
        busy={erase.isPending}
        error={erase.error}
        onClose={close}
        onConfirm={() =>
          erase.mutate(undefined, {
            onSuccess: () => {
              setAsking(undefined)
              onDone('Datos personales borrados.')
            },
          })
        }
      >
        <p>Se borrarán el nombre, la dirección (salvo el país) y el mensaje de esta carta, y su prueba.</p>
        <p>La carta seguirá en tu lista con su estado, su historial y su coste. No se puede deshacer.</p>
      </ConfirmDialog>
    </div>
  )
}

/**
 * The proof's pages as thumbnails, each opening large. A card design with artwork has a front page
 * first, printed or preprinted (whose proof shows its stock's front); the others start with the
 * handwriting (no request is made for a page the proof does not have: its 404 would be an error in
 * the console).
 */
function ProofThumbnails({ card }: { card: Card }) {
  const design = useCardDesign(card.cardDesignId)
  const [open, setOpen] = useState<number>()
  // A page that failed (the proof took too long: 503) shows a button to ask again: a new <img>
  // (its key changes), since the query takes no cache-busting parameter (an unknown one is a 400).
  const [attempts, setAttempts] = useState<Record<number, number>>({})
  const [broken, setBroken] = useState<Record<number, boolean>>({})
  if (design.isPending) return <Loading />
  const hasFront = design.data?.artwork != null
  const pages = [...(hasFront ? ['Anverso de la tarjeta'] : []), 'Texto escrito a mano', 'Sobre']
  const src = (page: number) => proofPageUrl(card.id, page)
  const retry = (page: number) => {
    setBroken((current) => ({ ...current, [page]: false }))
    setAttempts((current) => ({ ...current, [page]: (current[page] ?? 0) + 1 }))
  }

  return (
    <>
      <ul className="thumbnails">
        {pages.map((label, index) => {
          const page = index + 1
          return (
            <li key={label}>
              {broken[page] ? (
                <div className="thumbnail thumbnail-broken">
                  <p>No se ha podido preparar esta imagen.</p>
                  <button type="button" className="button-secondary" onClick={() => retry(page)}>
                    Reintentar
                  </button>
                </div>
              ) : (
                <button type="button" className="thumbnail" onClick={() => setOpen(page)} aria-label={`Ver grande: ${label}`}>
                  <img key={attempts[page] ?? 0} src={src(page)} alt={label} onError={() => setBroken((current) => ({ ...current, [page]: true }))} />
                </button>
              )}
              <span className="thumbnail-label">{label}</span>
            </li>
          )
        })}
      </ul>
      <p>
        <a href={proofPdfUrl(card.id)} target="_blank" rel="noopener">
          Abrir la prueba completa en PDF
        </a>
      </p>
      <Dialog wide open={open !== undefined} title={open ? (pages[open - 1] ?? 'Prueba') : 'Prueba'} onClose={() => setOpen(undefined)}>
        {open !== undefined && <img className="proof-large" src={src(open)} alt={pages[open - 1] ?? 'Prueba'} />}
        <div className="actions">
          <button type="button" onClick={() => setOpen(undefined)} autoFocus>
            Cerrar
          </button>
        </div>
      </Dialog>
    </>
  )
}

function AddressBlock({ card }: { card: Card }) {
  if (card.personalDataErasedAt) return <p>Borrada (queda el país: {countryName(card.recipient.country)}).</p>
  const printed = card.addressLines
  const { recipient, address } = card
  const lines = printed ?? [
    `${recipient.name} ${recipient.surname}`,
    recipient.company,
    recipient.address,
    `${recipient.zip} ${recipient.city}`,
    recipient.province,
    countryName(recipient.country),
  ]
  return (
    <>
      <address className="address-lines">
        {lines.filter(Boolean).map((line, index) => (
          <span key={index}>{line}</span>
        ))}
      </address>
      <p className="hint">{printed ? 'Tal como se imprime en el sobre.' : 'Tal como se envió: aún no se ha comprobado la dirección.'}</p>
      {address && address.problems.length > 0 && (
        <Notice kind="warning">
          <p>Problemas de la dirección:</p>
          <ul>
            {address.problems.map((problem) => (
              <li key={problem}>{problem}</li>
            ))}
          </ul>
        </Notice>
      )}
      {address && address.changes.length > 0 && (
        <>
          <p>Correcciones hechas al comprobarla:</p>
          <ul>
            {address.changes.map((change, index) => (
              <li key={index}>
                {change.from ?? '—'} → {change.to ?? '—'} ({change.reason})
              </li>
            ))}
          </ul>
        </>
      )}
    </>
  )
}

function LetterDetails({ card }: { card: Card }) {
  const company = useCompanyData()
  const fonts = useFonts()
  const nameIn = (list: { id: string; name: string }[] | undefined, id: string | null) =>
    id === null ? null : (list?.find((item) => item.id === id)?.name ?? '—')
  const font = fonts.data?.find((item) => item.name === card.fontName)
  const rows: [string, string | null][] = [
    ['Coste', formatCredits(card.cost)],
    ['Creada', formatDateTime(card.createdAt)],
    ['Programada para', card.sendAt ? formatDateTime(card.sendAt) : null],
    ['Tinta', inkName(card.inkColor)],
    ['Letra', font?.family ?? card.fontName],
    ['Diseño de tarjeta', nameIn(company.data?.cardDesigns, card.cardDesignId)],
    ['Diseño de sobre', nameIn(company.data?.envelopeDesigns, card.envelopeDesignId)],
    ['Remitente', nameIn(company.data?.senders, card.senderId)],
    ['Firma', card.signatureId ? nameIn(company.data?.signatures, card.signatureId) : 'Nombre del remitente'],
    ['Tipo', card.type === 'campaign' ? 'De campaña' : 'Individual'],
  ]
  return (
    <dl className="facts">
      {rows
        .filter((row): row is [string, string] => row[1] !== null)
        .map(([term, value]) => (
          <div key={term}>
            <dt>{term}</dt>
            <dd>{value}</dd>
          </div>
        ))}
    </dl>
  )
}
