import { createContext, useContext } from 'react'
import type { SessionUser } from './api'

export const SessionContext = createContext<SessionUser | null>(null)

/** The signed-in person; only pages inside the shell ask, and the shell shows only with a session. */
export function useUser(): SessionUser {
  const user = useContext(SessionContext)
  if (!user) throw new Error('useUser outside a session')
  return user
}

/**
 * What each role may do, the dashboard's one copy of the rule (the API enforces it anyway):
 * a viewer only reads; only an owner manages keys, webhooks and the team.
 */
export const permissions = {
  send: (user: SessionUser) => user.role !== 'viewer',
  manage: (user: SessionUser) => user.role === 'owner',
}
export type Permission = keyof typeof permissions

export const useCan = (permission: Permission) => permissions[permission](useUser())
