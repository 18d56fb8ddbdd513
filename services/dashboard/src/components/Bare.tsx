import type { ReactNode } from 'react'

/** The frame of the pages seen before signing in: a header with the service's name, and the page. */
export function BareLayout({ children }: { children: ReactNode }) {
  return (
    <div className="app bare">
      <header className="site-header">
        <span className="brand">Cartas a mano</span>
      </header>
      <main id="main" tabIndex={-1} className="bare-main">
        {children}
      </main>
    </div>
  )
}
