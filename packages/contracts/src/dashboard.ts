import { Type, type Static } from 'typebox'
import { Literals, Mode, strict } from './common.js'
import { dashboardRoles } from './dashboard-roles.js'

/** The schemas of the dashboard's people and sessions: sign-in, invitations, the team. */

export const Role = Literals(dashboardRoles, {
  description: 'owner: everything, the team and API keys included; member: sends, cancels and uploads; viewer: reads only',
  errorMessage: "El campo 'role' debe ser 'owner', 'member' o 'viewer'",
})

/** An address a person can receive mail at, spaces around it allowed (they are trimmed); checked loosely: the invitation itself proves it. */
export const Email = Type.String({
  minLength: 3,
  maxLength: 254,
  // No character a mail header reads as a list, a group or a name (, ; : < > ( ) [ ] " \\): the
  // address signed in with is the one the invitation goes to.
  pattern: '^\\s*[^\\s@,;:<>()\\[\\]"\\\\]+@[^\\s@,;:<>()\\[\\]"\\\\]+\\.[^\\s@,;:<>()\\[\\]"\\\\]+\\s*$',
  errorMessage: "El campo 'email' debe ser una dirección de correo electrónico (como ana@example.com)",
})

export const SessionUser = Type.Object({
  id: Type.String({ format: 'uuid' }),
  email: Type.String(),
  role: Role,
  accountId: Type.String({ format: 'uuid' }),
  accountName: Type.String(),
})
export type SessionUser = Static<typeof SessionUser>

export const Session = Type.Object({ user: SessionUser })

/** Longer passwords add nothing a person types and cost hashing time: a bound against a megabyte one. */
export const PASSWORD_MAX_LENGTH = 256

const Password = Type.String({ minLength: 1, maxLength: PASSWORD_MAX_LENGTH })

export const SignInBody = Type.Object({ email: Type.String({ minLength: 1, maxLength: 254 }), password: Password }, strict)

/**
 * An invitation's token travels in the body, never in a URL: a path or a query is written to the
 * gateway's and every proxy's access logs, and whoever read one could take the invitation.
 */
const InvitationToken = Type.String({ minLength: 1, maxLength: 64, description: 'The token after the # of the invitation link' })

export const InvitationLookupBody = Type.Object({ token: InvitationToken }, strict)

export const InvitationView = Type.Object({
  email: Type.String(),
  accountName: Type.String(),
  role: Role,
  expiresAt: Type.String({ format: 'date-time' }),
})

export const AcceptInvitationBody = Type.Object({ token: InvitationToken, password: Password }, strict)

export const InviteBody = Type.Object({ email: Email, role: Role }, strict)

export const Invitation = Type.Object({
  id: Type.String({ format: 'uuid' }),
  email: Type.String(),
  role: Role,
  invitationUrl: Type.String({ description: 'A one-time link under /dashboard/, valid for 72 hours' }),
  emailed: Type.Boolean({ description: 'Whether the invitation was also sent by email (SMTP_URL set)' }),
})
export type Invitation = Static<typeof Invitation>

export const TeamUser = Type.Object({
  id: Type.String({ format: 'uuid' }),
  email: Type.String(),
  role: Role,
  status: Type.Union([Type.Literal('active'), Type.Literal('invited')]),
  createdAt: Type.String({ format: 'date-time' }),
})

export const TeamList = Type.Object({ data: Type.Array(TeamUser) })

export const ChangeRoleBody = Type.Object({ role: Role }, strict)

export const AccountApiKey = Type.Object({
  id: Type.String({ format: 'uuid' }),
  prefix: Type.String({ description: "The key's first 12 characters" }),
  mode: Mode,
  createdAt: Type.String({ format: 'date-time' }),
})

export const AccountApiKeyList = Type.Object({ data: Type.Array(AccountApiKey) })

export const CreateApiKeyBody = Type.Object({ mode: Type.With(Mode, { errorMessage: "El campo 'mode' debe ser 'live' o 'test'" }) }, strict)

export const CreatedAccountApiKey = Type.Object({
  ...AccountApiKey.properties,
  apiKey: Type.String({ description: 'The key itself, shown this once' }),
})
