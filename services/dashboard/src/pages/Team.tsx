import { useState, type FormEvent } from 'react'
import { useChangeRole, useInviteUser, useRemoveUser, useUsers, type TeamUser } from '../api'
import { ConfirmDialog, OneTimeSecret } from '../components/Dialog'
import { Email } from '../components/Email'
import { Field } from '../components/Field'
import { Page } from '../components/Page'
import { ErrorBox, Loading, Notice } from '../components/Status'
import { formatDate } from '../format'
import { roleHints, roleNames, roles, type Role } from '../labels'
import { useUser } from '../session'

export default function TeamPage() {
  const me = useUser()
  const users = useUsers()
  const changeRole = useChangeRole()
  const remove = useRemoveUser()
  const [roleChoice, setRoleChoice] = useState<Record<string, Role>>({})
  const [changing, setChanging] = useState<{ user: TeamUser; role: Role }>()
  const [removing, setRemoving] = useState<TeamUser>()

  return (
    <Page title="Equipo" lead="Las personas que pueden entrar en este panel, y lo que puede hacer cada una.">
      <ul className="role-legend">
        {roles.map((role) => (
          <li key={role}>
            <strong>{roleNames[role]}</strong>: {roleHints[role]}.
          </li>
        ))}
      </ul>

      <section className="stack">
        <h2 id="team-users">Personas</h2>
        {users.isPending ? (
          <Loading />
        ) : users.error ? (
          <ErrorBox error={users.error} />
        ) : (
          <div className="table-scroll" role="region" aria-label="Personas del equipo" tabIndex={0}>
            <table>
              <caption className="visually-hidden">Personas del equipo</caption>
              <thead>
                <tr>
                  <th scope="col">Correo electrónico</th>
                  <th scope="col">Estado</th>
                  <th scope="col">Desde</th>
                  <th scope="col">Rol</th>
                  <th scope="col">
                    <span className="visually-hidden">Acciones</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {users.data.map((user) => {
                  const chosen = roleChoice[user.id] ?? user.role
                  return (
                    <tr key={user.id}>
                      <th scope="row" className="person">
                        <Email address={user.email} />
                        {user.id === me.id && <span className="tag">Tú</span>}
                      </th>
                      <td data-label="Estado">{user.status === 'invited' ? 'Invitación pendiente' : 'Activo'}</td>
                      <td className="nowrap" data-label="Desde">
                        {formatDate(user.createdAt)}
                      </td>
                      <td data-label="Rol">
                        {/* The button shows once another role is chosen: until then there is nothing to change. */}
                        <div className="role-change">
                          <select
                            aria-label={`Rol de ${user.email}`}
                            value={chosen}
                            onChange={(event) => setRoleChoice((current) => ({ ...current, [user.id]: event.target.value as Role }))}
                          >
                            {roles.map((role) => (
                              <option key={role} value={role}>
                                {roleNames[role]}
                              </option>
                            ))}
                          </select>
                          {chosen !== user.role && (
                            <button type="button" className="button-small" onClick={() => setChanging({ user, role: chosen })}>
                              Cambiar rol<span className="visually-hidden"> de {user.email}</span>
                            </button>
                          )}
                        </div>
                      </td>
                      <td className="cell-actions">
                        <button type="button" className="button-secondary button-small" onClick={() => setRemoving(user)}>
                          Quitar<span className="visually-hidden"> a {user.email}</span>
                        </button>
                      </td>
                    </tr>
                  )
                })}
              </tbody>
            </table>
          </div>
        )}
      </section>

      <Invite />

      <ConfirmDialog
        open={changing !== undefined}
        title="¿Cambiar el rol?"
        confirmLabel="Sí, cambiar el rol"
        busy={changeRole.isPending}
        error={changeRole.error}
        onClose={() => {
          setChanging(undefined)
          changeRole.reset()
        }}
        onConfirm={() =>
          changing &&
          changeRole.mutate(
            { id: changing.user.id, role: changing.role },
            {
              onSuccess: () => {
                setChanging(undefined)
                setRoleChoice((current) => {
                  const rest = { ...current }
                  delete rest[changing.user.id]
                  return rest
                })
              },
            },
          )
        }
      >
        {changing && (
          <p>
            <span className="break">{changing.user.email}</span> pasará de {roleNames[changing.user.role]} a <strong>{roleNames[changing.role]}</strong> (
            {roleHints[changing.role]}).
          </p>
        )}
      </ConfirmDialog>

      <ConfirmDialog
        open={removing !== undefined}
        title="¿Quitar a esta persona?"
        confirmLabel="Sí, quitar"
        danger
        busy={remove.isPending}
        error={remove.error}
        onClose={() => {
          setRemoving(undefined)
          remove.reset()
        }}
        onConfirm={() => removing && remove.mutate(removing.id, { onSuccess: () => setRemoving(undefined) })}
      >
        {removing && (
          <p>
            <span className="break">{removing.email}</span> ya no podrá entrar en el panel de esta cuenta.
            {removing.id === me.id && ' Eres tú: saldrás de la cuenta.'}
          </p>
        )}
      </ConfirmDialog>
    </Page>
  )
}

function Invite() {
  const invite = useInviteUser()
  const [email, setEmail] = useState('')
  const [role, setRole] = useState<Role>('member')

  const submit = (event: FormEvent) => {
    event.preventDefault()
    invite.mutate({ email: email.trim(), role }, { onSuccess: () => setEmail('') })
  }

  return (
    <section className="stack">
      <h2 id="team-invite">Invitar a alguien</h2>
      <form onSubmit={submit} className="inline-form">
        <Field label="Correo electrónico">
          {(props) => <input {...props} type="email" autoComplete="off" required value={email} onChange={(event) => setEmail(event.target.value)} />}
        </Field>
        <Field label="Rol">
          {(props) => (
            <select {...props} value={role} onChange={(event) => setRole(event.target.value as Role)}>
              {roles.map((option) => (
                <option key={option} value={option}>
                  {roleNames[option]}
                </option>
              ))}
            </select>
          )}
        </Field>
        <button type="submit" disabled={invite.isPending}>
          Invitar
        </button>
      </form>
      <ErrorBox error={invite.error} />
      {invite.data && (
        <div role="status">
          <Notice kind="success">
            <p>
              Invitación creada para <span className="break">{invite.data.email}</span>.{' '}
              {invite.data.emailed
                ? 'Le hemos enviado el enlace por correo; también puedes copiarlo y enviárselo tú:'
                : 'Envíale este enlace para que cree su contraseña:'}
            </p>
            <OneTimeSecret label="Enlace de la invitación" value={invite.data.invitationUrl} />
            <p>El enlace sirve una sola vez y caduca en 72 horas.</p>
          </Notice>
        </div>
      )}
    </section>
  )
}
