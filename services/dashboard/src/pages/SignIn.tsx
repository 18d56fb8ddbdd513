import { useState, type FormEvent } from 'react'
import { useSignIn } from '../api'
import { BareLayout } from '../components/Bare'
import { Field } from '../components/Field'
import { PageTitle } from '../components/Page'
import { ErrorBox } from '../components/Status'

export function SignInPage() {
  const signIn = useSignIn()
  const [email, setEmail] = useState('')
  const [password, setPassword] = useState('')

  const submit = (event: FormEvent) => {
    event.preventDefault()
    signIn.mutate({ email: email.trim(), password })
  }

  return (
    <BareLayout>
      <div className="card narrow">
        <PageTitle title="Entrar">Entrar en tu cuenta</PageTitle>
        <form onSubmit={submit} className="stack">
          {/* 401 (wrong email or password, one message for both) and 429 (too many tries): the API's words. */}
          <ErrorBox error={signIn.error} />
          <Field label="Correo electrónico">
            {(props) => (
              <input {...props} type="email" name="email" autoComplete="username" required value={email} onChange={(event) => setEmail(event.target.value)} />
            )}
          </Field>
          <Field label="Contraseña">
            {(props) => (
              <input
                {...props}
                type="password"
                name="password"
                autoComplete="current-password"
                required
                value={password}
                onChange={(event) => setPassword(event.target.value)}
              />
            )}
          </Field>
          <div className="actions">
            <button type="submit" disabled={signIn.isPending}>
              Entrar
            </button>
            {signIn.isPending && <span role="status">Comprobando…</span>}
          </div>
        </form>
        <p className="hint">¿Has recibido una invitación? Abre el enlace del correo para crear tu contraseña.</p>
      </div>
    </BareLayout>
  )
}
