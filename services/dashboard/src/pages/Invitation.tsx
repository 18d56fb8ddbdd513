import { useRef, useState, type FormEvent } from 'react'
import { useLocation, useNavigate } from 'react-router'
import { useAcceptInvitation, useInvitation } from '../api'
import { BareLayout } from '../components/Bare'
import { Email } from '../components/Email'
import { Field } from '../components/Field'
import { PageTitle } from '../components/Page'
import { ErrorBox, Loading } from '../components/Status'
import { formatDateTime } from '../format'
import { roleNames } from '../labels'

/**
 * /dashboard/invitacion#<token>: the token travels in the fragment, which the browser never sends
 * to a server (nor in a Referer), and the page sends it in a request's body, never in a URL that
 * access logs would keep.
 */
export default function InvitationPage() {
  const { hash } = useLocation()
  const token = decodeURIComponent(hash.replace(/^#/, ''))
  const invitation = useInvitation(token)
  const accept = useAcceptInvitation(token)
  const navigate = useNavigate()
  const [password, setPassword] = useState('')
  const [repeated, setRepeated] = useState('')
  const [mismatch, setMismatch] = useState(false)
  const repeatInput = useRef<HTMLInputElement>(null)

  const submit = (event: FormEvent) => {
    event.preventDefault()
    if (password !== repeated) {
      setMismatch(true)
      repeatInput.current?.focus()
      return
    }
    setMismatch(false)
    accept.mutate(password, { onSuccess: () => void navigate('/') })
  }

  return (
    <BareLayout>
      <div className="card narrow">
        <PageTitle title="Invitación">Crea tu acceso</PageTitle>
        {token === '' ? (
          <div role="alert" className="notice notice-error">
            <p>Falta el código de la invitación. Abre el enlace completo que recibiste por correo.</p>
          </div>
        ) : invitation.isPending ? (
          <Loading />
        ) : invitation.error ? (
          // 404: expired, used or unknown, as the API says.
          <ErrorBox error={invitation.error} />
        ) : (
          <>
            <dl className="facts facts-stack">
              <div>
                <dt>Cuenta</dt>
                <dd>{invitation.data.accountName}</dd>
              </div>
              <div>
                <dt>Correo electrónico</dt>
                <dd>
                  <Email address={invitation.data.email} />
                </dd>
              </div>
              <div>
                <dt>Rol</dt>
                <dd>{roleNames[invitation.data.role] ?? invitation.data.role}</dd>
              </div>
              <div>
                <dt>Caduca</dt>
                <dd>{formatDateTime(invitation.data.expiresAt)}</dd>
              </div>
            </dl>
            <form onSubmit={submit} className="stack">
              {/* The server's reason: too short, too common… */}
              <ErrorBox error={accept.error} />
              <Field label="Contraseña" hint="Elige una que no uses en otros sitios.">
                {(props) => (
                  <input
                    {...props}
                    type="password"
                    autoComplete="new-password"
                    required
                    value={password}
                    onChange={(event) => setPassword(event.target.value)}
                  />
                )}
              </Field>
              <Field label="Repite la contraseña" error={mismatch ? 'Las dos contraseñas no coinciden.' : undefined}>
                {(props) => (
                  <input
                    {...props}
                    ref={repeatInput}
                    type="password"
                    autoComplete="new-password"
                    required
                    value={repeated}
                    onChange={(event) => {
                      setRepeated(event.target.value)
                      setMismatch(false)
                    }}
                  />
                )}
              </Field>
              <div className="actions">
                <button type="submit" disabled={accept.isPending}>
                  Crear acceso
                </button>
                {accept.isPending && <span role="status">Creando tu acceso…</span>}
              </div>
            </form>
          </>
        )}
      </div>
    </BareLayout>
  )
}
