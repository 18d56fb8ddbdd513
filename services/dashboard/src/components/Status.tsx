import type { ReactNode } from 'react'
import { errorMessage } from '../client'

/** Something is on its way: said once to screen readers, shown as a quiet line. */
export function Loading({ children = 'Cargando…' }: { children?: ReactNode }) {
  return (
    <p role="status" className="loading">
      {children}
    </p>
  )
}

/** An error as a person reads it: the API's message (its 403, its 409…), or what failed on the way. */
export function ErrorBox({ error, children }: { error: unknown; children?: ReactNode }) {
  if (!error) return null
  return (
    <div role="alert" className="notice notice-error">
      <p>{errorMessage(error)}</p>
      {children}
    </div>
  )
}

export function Notice({ kind = 'info', children }: { kind?: 'info' | 'success' | 'warning'; children: ReactNode }) {
  return <div className={`notice notice-${kind}`}>{children}</div>
}

/** The next page of a list read a page at a time (cursor paging): shown while the API says there is one. */
export function LoadMore({ hasMore, loading, onClick }: { hasMore: boolean; loading: boolean; onClick: () => void }) {
  if (!hasMore) return null
  return (
    <p className="load-more">
      <button type="button" className="button-secondary" onClick={onClick} disabled={loading}>
        {loading ? 'Cargando…' : 'Cargar más'}
      </button>
    </p>
  )
}
