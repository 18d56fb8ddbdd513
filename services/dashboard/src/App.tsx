import { lazy, Suspense, type ReactNode } from 'react'
import { Link, Route, Routes } from 'react-router'
import { useSession } from './api'
import { Shell } from './components/Shell'
import { ErrorBox, Loading } from './components/Status'
import { Page } from './components/Page'
import { HomePage } from './pages/Home'
import { SignInPage } from './pages/SignIn'
import { SessionContext, useCan, type Permission } from './session'

// The sign-in and home pages come with the first load; every other page is a chunk of its own,
// loaded the first time someone opens it.
const LettersPage = lazy(() => import('./pages/Letters'))
const LetterPage = lazy(() => import('./pages/Letter'))
const NewLetterPage = lazy(() => import('./pages/NewLetter'))
const BulkPage = lazy(() => import('./pages/Bulk'))
const CampaignsPage = lazy(() => import('./pages/Campaigns'))
const DesignsPage = lazy(() => import('./pages/Designs'))
const BalancePage = lazy(() => import('./pages/Balance'))
const DevelopersPage = lazy(() => import('./pages/Developers'))
const TeamPage = lazy(() => import('./pages/Team'))
const InvitationPage = lazy(() => import('./pages/Invitation'))

export function App() {
  return (
    <Routes>
      {/* Reached from an emailed link, signed in or not. */}
      <Route
        path="invitacion"
        element={
          <Suspense fallback={<Loading />}>
            <InvitationPage />
          </Suspense>
        }
      />
      <Route path="*" element={<SignedIn />} />
    </Routes>
  )
}

/** Every other page needs a session: without one the sign-in page shows in its place, at the same address. */
function SignedIn() {
  const session = useSession()
  if (session.isPending)
    return (
      <main className="centered">
        <Loading />
      </main>
    )
  if (session.error)
    return (
      <main className="centered">
        <h1>No se ha podido abrir el panel</h1>
        <ErrorBox error={session.error}>
          <button type="button" onClick={() => void session.refetch()}>
            Reintentar
          </button>
        </ErrorBox>
      </main>
    )
  if (!session.data) return <SignInPage />
  return (
    <SessionContext.Provider value={session.data}>
      <Shell>
        <Routes>
          <Route index element={<HomePage />} />
          <Route path="cartas" element={<LettersPage />} />
          <Route path="cartas/:cardId" element={<LetterPage />} />
          <Route path="nueva" element={<Allowed to="send" page={<NewLetterPage />} />} />
          <Route path="masivo" element={<Allowed to="send" page={<BulkPage />} />} />
          <Route path="campanas" element={<CampaignsPage />} />
          <Route path="disenos" element={<DesignsPage />} />
          <Route path="saldo" element={<BalancePage />} />
          <Route path="desarrolladores" element={<Allowed to="manage" page={<DevelopersPage />} />} />
          <Route path="equipo" element={<Allowed to="manage" page={<TeamPage />} />} />
          <Route path="*" element={<NotFoundPage />} />
        </Routes>
      </Shell>
    </SessionContext.Provider>
  )
}

/** A page the role may not use: said plainly (the API would answer 403 anyway). */
function Allowed({ to, page }: { to: Permission; page: ReactNode }) {
  const can = useCan(to)
  if (can) return page
  return (
    <Page title="No tienes permiso">
      <p>Tu usuario no puede usar esta página. Si lo necesitas, pide a la persona propietaria de la cuenta que cambie tu rol.</p>
    </Page>
  )
}

function NotFoundPage() {
  return (
    <Page title="Página no encontrada">
      <p>La dirección no corresponde a ninguna página del panel. Usa el menú para ir a otra página.</p>
      <p>
        <Link to="/">Volver al inicio</Link>
      </p>
    </Page>
  )
}
