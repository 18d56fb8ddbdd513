import { Suspense, useEffect, useState, type MouseEvent, type ReactNode } from 'react'
import { NavLink, useLocation, useNavigate } from 'react-router'
import { useSignOut } from '../api'
import { permissions, useUser, type Permission } from '../session'
import { Email } from './Email'
import { ErrorBox, Loading } from './Status'

const links: { to: string; label: string; needs?: Permission }[] = [
  { to: '/', label: 'Inicio' },
  { to: '/cartas', label: 'Cartas' },
  { to: '/nueva', label: 'Nueva carta', needs: 'send' },
  { to: '/masivo', label: 'Envío masivo', needs: 'send' },
  { to: '/campanas', label: 'Campañas' },
  { to: '/disenos', label: 'Diseños' },
  { to: '/saldo', label: 'Saldo' },
  { to: '/desarrolladores', label: 'Desarrolladores', needs: 'manage' },
  { to: '/equipo', label: 'Equipo', needs: 'manage' },
]

/** The frame of every signed-in page: who is signed in, the menu (folded on a phone), and the page. */
export function Shell({ children }: { children: ReactNode }) {
  const user = useUser()
  const signOut = useSignOut()
  const navigate = useNavigate()
  const { pathname } = useLocation()
  const [menuOpen, setMenuOpen] = useState(false)

  // A link followed on a phone closes the menu it was in.
  useEffect(() => setMenuOpen(false), [pathname])

  // Signed out (or not: the session is forgotten here either way), the sign-in page shows at the dashboard's root.
  const leave = () => {
    void signOut
      .mutateAsync()
      .catch(() => undefined)
      .finally(() => void navigate('/'))
  }

  const skipToContent = (event: MouseEvent) => {
    event.preventDefault()
    document.getElementById('main')?.focus()
  }

  return (
    <div className="app">
      <a href="#main" className="skip-link" onClick={skipToContent}>
        Saltar al contenido
      </a>
      <header className="site-header">
        <span className="brand">Cartas a mano</span>
        {/* Shown on a phone only, where it folds the menu; first after the name, as it is seen. */}
        <button
          type="button"
          className="button-secondary menu-button"
          aria-expanded={menuOpen}
          aria-controls="main-nav"
          onClick={() => setMenuOpen((open) => !open)}
        >
          Menú
        </button>
        <div className="account">
          <span className="account-name">{user.accountName}</span>
          <Email address={user.email} className="account-email" />
        </div>
        <button type="button" className="button-secondary sign-out" onClick={leave} disabled={signOut.isPending}>
          Salir
        </button>
      </header>
      <div className="layout">
        <nav
          id="main-nav"
          aria-label="Principal"
          className={menuOpen ? 'main-nav open' : 'main-nav'}
          onKeyDown={(event) => {
            if (event.key === 'Escape' && menuOpen) {
              setMenuOpen(false)
              document.querySelector<HTMLButtonElement>('.menu-button')?.focus()
            }
          }}
        >
          <ul>
            {links
              .filter((link) => !link.needs || permissions[link.needs](user))
              .map((link) => (
                <li key={link.to}>
                  <NavLink to={link.to} end={link.to === '/'}>
                    {link.label}
                  </NavLink>
                </li>
              ))}
          </ul>
        </nav>
        <main id="main" tabIndex={-1}>
          <ErrorBox error={signOut.error} />
          <Suspense fallback={<Loading />}>{children}</Suspense>
        </main>
      </div>
    </div>
  )
}
