import { and, asc, eq, gt, isNotNull, ne, sql } from 'drizzle-orm'
import type { DashboardRole } from '@letters/contracts'
import { accounts, dashboardSessions, dashboardUsers, type Db, type Executor } from '@letters/db'
import { conflict, notFound } from '../../common/errors.js'
import { newToken } from '../../common/tokens.js'

/** How long an invitation's link works. */
export const INVITATION_TTL_MS = 72 * 3_600_000

/** One person, one user, however the address is typed. */
export const normalizeEmail = (email: string) => email.trim().toLowerCase()

export interface DashboardUser {
  id: string
  email: string
  role: DashboardRole
  status: 'active' | 'invited'
  createdAt: string
}

export interface Invitation {
  id: string
  email: string
  role: DashboardRole
  invitationUrl: string
}

const invitationUrl = (publicBaseUrl: string, token: string) => `${publicBaseUrl}/dashboard/invitacion#${token}`

const userNotFound = () => notFound('El usuario no existe en esta cuenta')

/**
 * Invites `email` to the account with `role`: a one-time link, valid for 72 hours. Inviting again
 * someone who has not followed the link yet gives a new link (the old one stops working) and the
 * new role; an email that already has a user, here or in another account, is a 409.
 */
export async function inviteUser(db: Db, accountId: string, body: { email: string; role: DashboardRole }, publicBaseUrl: string): Promise<Invitation> {
  const email = normalizeEmail(body.email)
  const { token, hash } = newToken()
  const expiresAt = new Date(Date.now() + INVITATION_TTL_MS)
  const [row] = await db
    .insert(dashboardUsers)
    .values({ accountId, email, role: body.role, invitationHash: hash, invitationExpiresAt: expiresAt })
    .onConflictDoUpdate({
      target: dashboardUsers.email,
      set: { accountId, role: body.role, invitationHash: hash, invitationExpiresAt: expiresAt },
      // A pending invitation of this account is renewed; another account's only once it has
      // expired unused, so that no one can hold an address they do not answer at.
      setWhere: sql`${dashboardUsers.passwordHash} IS NULL AND (${dashboardUsers.accountId} = ${accountId} OR ${dashboardUsers.invitationExpiresAt} <= now())`,
    })
    .returning({ id: dashboardUsers.id })
  if (!row) throw conflict(`Ya hay un usuario con el correo ${email}`)
  return { id: row.id, email, role: body.role, invitationUrl: invitationUrl(publicBaseUrl, token) }
}

/** What the invitation page shows: whose link it is, for which account, until when. Undefined once used or expired. */
export async function findInvitation(db: Db, tokenHash: string) {
  const [row] = await db
    .select({ email: dashboardUsers.email, role: dashboardUsers.role, accountName: accounts.name, expiresAt: dashboardUsers.invitationExpiresAt })
    .from(dashboardUsers)
    .innerJoin(accounts, eq(accounts.id, dashboardUsers.accountId))
    .where(and(eq(dashboardUsers.invitationHash, tokenHash), gt(dashboardUsers.invitationExpiresAt, new Date())))
  return row && { ...row, expiresAt: row.expiresAt!.toISOString() }
}

/**
 * Sets the password of the user an invitation names and forgets the invitation, in one
 * statement: of two requests with the same link, one sets it and the other finds nothing.
 */
export async function acceptInvitation(ex: Executor, tokenHash: string, passwordHash: string): Promise<SignedInUser | undefined> {
  const [row] = await ex
    .update(dashboardUsers)
    .set({ passwordHash, invitationHash: null, invitationExpiresAt: null })
    .where(and(eq(dashboardUsers.invitationHash, tokenHash), gt(dashboardUsers.invitationExpiresAt, new Date())))
    .returning({ id: dashboardUsers.id })
  return row ? signedInUser(ex, row.id) : undefined
}

export interface SignedInUser {
  id: string
  email: string
  role: DashboardRole
  accountId: string
  accountName: string
}

const signedInColumns = {
  id: dashboardUsers.id,
  email: dashboardUsers.email,
  role: dashboardUsers.role,
  accountId: dashboardUsers.accountId,
  accountName: accounts.name,
}

export async function signedInUser(ex: Executor, userId: string): Promise<SignedInUser | undefined> {
  const [row] = await ex
    .select(signedInColumns)
    .from(dashboardUsers)
    .innerJoin(accounts, eq(accounts.id, dashboardUsers.accountId))
    .where(eq(dashboardUsers.id, userId))
  return row
}

/** The user a sign-in names, as the session shows it, and its password's hash (null until the invitation is followed). */
export async function userByEmail(db: Db, email: string): Promise<(SignedInUser & { passwordHash: string | null }) | undefined> {
  const [row] = await db
    .select({ ...signedInColumns, passwordHash: dashboardUsers.passwordHash })
    .from(dashboardUsers)
    .innerJoin(accounts, eq(accounts.id, dashboardUsers.accountId))
    .where(eq(dashboardUsers.email, normalizeEmail(email)))
  return row
}

const teamColumns = {
  id: dashboardUsers.id,
  email: dashboardUsers.email,
  role: dashboardUsers.role,
  active: sql<boolean>`${dashboardUsers.passwordHash} IS NOT NULL`,
  createdAt: dashboardUsers.createdAt,
}

/** A user as the team's list shows it: active once the invitation is followed. */
const teamUser = ({ active, createdAt, ...user }: { id: string; email: string; role: DashboardRole; active: boolean; createdAt: Date }): DashboardUser => ({
  ...user,
  status: active ? 'active' : 'invited',
  createdAt: createdAt.toISOString(),
})

export async function listUsers(db: Db, accountId: string): Promise<{ data: DashboardUser[] }> {
  const rows = await db
    .select(teamColumns)
    .from(dashboardUsers)
    .where(eq(dashboardUsers.accountId, accountId))
    .orderBy(asc(dashboardUsers.createdAt), asc(dashboardUsers.id))
  return { data: rows.map(teamUser) }
}

/**
 * Runs `change` on the account's users locked, after checking that the account keeps at least one
 * owner who can sign in once it is done: two owners demoting each other at once cannot leave the
 * team without one.
 */
async function withOwnersKept<T>(db: Db, accountId: string, userId: string, nextRole: DashboardRole | null, change: (tx: Executor) => Promise<T>): Promise<T> {
  return db.transaction(async (tx) => {
    const team = await tx
      .select({ id: dashboardUsers.id, role: dashboardUsers.role, active: isNotNull(dashboardUsers.passwordHash) })
      .from(dashboardUsers)
      .where(eq(dashboardUsers.accountId, accountId))
      .for('update')
    const user = team.find((member) => member.id === userId)
    if (!user) throw userNotFound()
    const ownersAfter = team.filter((member) => (member.id === userId ? nextRole === 'owner' : member.role === 'owner') && member.active).length
    const wasActiveOwner = user.role === 'owner' && user.active
    if (wasActiveOwner && ownersAfter === 0) throw conflict('La cuenta debe conservar al menos un propietario con acceso; nombra antes a otro')
    return change(tx)
  })
}

/**
 * Gives a user another role. Its sessions end: they were opened with the old one. (A session
 * opened while this commits keeps the old role too, and ends at its next request, when it finds
 * its user's role changed: DashboardSessions.identify.) The same role again changes nothing.
 */
export async function changeRole(db: Db, accountId: string, userId: string, role: DashboardRole): Promise<DashboardUser> {
  return withOwnersKept(db, accountId, userId, role, async (tx) => {
    const [changed] = await tx
      .update(dashboardUsers)
      .set({ role })
      .where(and(eq(dashboardUsers.id, userId), ne(dashboardUsers.role, role)))
      .returning({ id: dashboardUsers.id })
    if (changed) await tx.delete(dashboardSessions).where(eq(dashboardSessions.userId, userId))
    const [row] = await tx.select(teamColumns).from(dashboardUsers).where(eq(dashboardUsers.id, userId))
    return teamUser(row!)
  })
}

/** Removes a user; its sessions go with it (the foreign key cascades). */
export async function removeUser(db: Db, accountId: string, userId: string): Promise<void> {
  await withOwnersKept(db, accountId, userId, null, (tx) => tx.delete(dashboardUsers).where(eq(dashboardUsers.id, userId)))
}
