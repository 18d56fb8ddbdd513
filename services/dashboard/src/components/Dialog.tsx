import { useEffect, useId, useRef, useState, type ReactNode } from 'react'
import { ErrorBox } from './Status'

/**
 * A modal <dialog>: showModal() keeps focus inside it, Escape closes it, and the browser gives
 * focus back to the button that opened it.
 */
export function Dialog({
  open,
  title,
  onClose,
  children,
  wide = false,
}: {
  open: boolean
  title: string
  onClose: () => void
  children: ReactNode
  /** As wide as the screen allows, for a picture to be looked at closely (a proof page). */
  wide?: boolean
}) {
  const ref = useRef<HTMLDialogElement>(null)
  const titleId = useId()
  useEffect(() => {
    const dialog = ref.current
    if (!dialog) return
    if (open && !dialog.open) dialog.showModal()
    if (!open && dialog.open) dialog.close()
  }, [open])
  return (
    <dialog ref={ref} aria-labelledby={titleId} onClose={onClose} className={wide ? 'dialog dialog-wide' : 'dialog'}>
      {open && (
        <>
          <h2 id={titleId}>{title}</h2>
          {children}
        </>
      )}
    </dialog>
  )
}

export interface ConfirmProps {
  open: boolean
  title: string
  children: ReactNode
  /** The button that does it, named for what it does ("Sí, cancelar la carta"). */
  confirmLabel: string
  dismissLabel?: string
  onConfirm: () => void
  onClose: () => void
  busy?: boolean
  error?: unknown
  danger?: boolean
}

/** A question before something that cannot be undone; the safe answer has the focus. */
export function ConfirmDialog({ open, title, children, confirmLabel, dismissLabel = 'Volver', onConfirm, onClose, busy, error, danger }: ConfirmProps) {
  return (
    <Dialog open={open} title={title} onClose={onClose}>
      <div className="dialog-body">{children}</div>
      <ErrorBox error={error} />
      <div className="actions">
        <button type="button" className="button-secondary" onClick={onClose} autoFocus>
          {dismissLabel}
        </button>
        <button type="button" className={danger ? 'button-danger' : undefined} onClick={onConfirm} disabled={busy}>
          {confirmLabel}
        </button>
      </div>
      {busy && <p role="status">Un momento…</p>}
    </Dialog>
  )
}

/**
 * A secret shown once (an API key, a webhook's signing secret), with a button that copies it.
 * Selecting the text by hand works too: the value is a plain, focusable field.
 */
export function OneTimeSecret({ label, value }: { label: string; value: string }) {
  const id = useId()
  const [copied, setCopied] = useState<'yes' | 'no' | undefined>()
  const copy = () => {
    navigator.clipboard.writeText(value).then(
      () => setCopied('yes'),
      () => setCopied('no'),
    )
  }
  return (
    <div className="secret">
      <label htmlFor={id}>{label}</label>
      <div className="secret-row">
        <input id={id} type="text" readOnly value={value} className="mono" onFocus={(event) => event.currentTarget.select()} />
        <button type="button" onClick={copy}>
          Copiar
        </button>
      </div>
      <p role="status" className="hint">
        {copied === 'yes' ? 'Copiado.' : copied === 'no' ? 'No se ha podido copiar: selecciona el texto y cópialo a mano.' : ''}
      </p>
    </div>
  )
}
