// Every call the dashboard makes to the API, as react-query hooks: the pages hold no request of
// their own, so a change of the API's shapes is fixed here.
import { useInfiniteQuery, useMutation, useQueries, useQuery, useQueryClient, type QueryClient } from '@tanstack/react-query'
import type { paths } from '@letters/sdk'
import { authClient, client, isUnauthorized, readCookie } from './client'
import type { LetterStatus, Role } from './labels'

// ---------------------------------------------------------------------------------------------
// Types

type JsonOf<Path extends keyof paths, Method extends 'get' | 'post', Status extends number = 200> = paths[Path][Method] extends {
  responses: { [S in Status]: { content: { 'application/json': infer Body } } }
}
  ? Body
  : never

export type CompanyData = JsonOf<'/company-data', 'get'>['data']
export type Campaign = JsonOf<'/campaigns', 'get'>['campaigns'][number]
export type CampaignStats = JsonOf<'/campaigns/{campaignId}/stats', 'get'>
export type Suppression = JsonOf<'/suppressions', 'get'>['data'][number]
export type Font = JsonOf<'/fonts', 'get'>['data'][number]
export type CardSummary = JsonOf<'/cards', 'get'>['data'][number]
export type Card = JsonOf<'/cards/{cardId}', 'get'>
export type CardDesign = JsonOf<'/card-designs/{id}', 'get'>
export type EnvelopeDesign = JsonOf<'/envelope-designs/{id}', 'get'>
export type SingleLetterBody = NonNullable<paths['/single']['post']['requestBody']>['content']['application/json']
export type BulkResult = JsonOf<'/cards/bulk', 'post'>
export type WebhookEndpoint = JsonOf<'/webhooks', 'get'>['data'][number]
export type WebhookCreated = JsonOf<'/webhooks', 'post', 201>
export type WebhookAttempt = JsonOf<'/webhooks/{id}/deliveries', 'get'>['data'][number]
export type LetterEvent = JsonOf<'/events', 'get'>['data'][number]

export type SessionUser = JsonOf<'/session', 'get'>['user']
export type Invitation = JsonOf<'/invitations/lookup', 'post'>
export type Balance = JsonOf<'/balance', 'get'>
export type Movement = JsonOf<'/balance/movements', 'get'>['data'][number]
export type CardStats = JsonOf<'/cards/stats', 'get'>
export type ApiKey = JsonOf<'/api-keys', 'get'>['data'][number]
export type ApiKeyCreated = JsonOf<'/api-keys', 'post', 201>
export type TeamUser = JsonOf<'/users', 'get'>['data'][number]
export type UserInvited = JsonOf<'/users', 'post', 201>

/** The body of a successful answer: the SDK throws every error answer, so a missing one is a bug. */
function body<T>(result: { data?: T }): T {
  if (result.data === undefined) throw new Error('La respuesta del servidor llegó vacía')
  return result.data
}

// ---------------------------------------------------------------------------------------------
// Session

/** The signed-in person, or null for nobody (then the sign-in page shows). */
export function useSession() {
  return useQuery({
    queryKey: ['session'],
    queryFn: async ({ signal }): Promise<SessionUser | null> => {
      // No CSRF cookie, no session (the server sets both together): asking would only earn a 401,
      // which the browser writes to the console as an error.
      if (readCookie('letters_csrf') === undefined) return null
      try {
        return body(await client.GET('/session', { signal })).user
      } catch (error) {
        if (isUnauthorized(error)) return null
        throw error
      }
    },
    staleTime: Infinity,
  })
}

export function useSignIn() {
  const queryClient = useQueryClient()
  return useMutation({
    // A 401 here is a wrong password, not an ended session: the global handler leaves it alone.
    meta: { signIn: true },
    mutationFn: async (credentials: { email: string; password: string }) => body(await authClient.POST('/session', { body: credentials })).user,
    onSuccess: (user) => signedIn(queryClient, user),
  })
}

export function useSignOut() {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: async () => {
      await client.DELETE('/session')
    },
    onSettled: () => signedOut(queryClient),
  })
}

/**
 * Someone else's data must never show from the cache: everything is forgotten, then the session
 * set. The invitation just used is kept: its page is still open, and would ask again for a link
 * that no longer works.
 */
function signedIn(queryClient: QueryClient, user: SessionUser) {
  queryClient.removeQueries({ predicate: (query) => query.queryKey[0] !== 'session' && query.queryKey[0] !== 'invitation' })
  queryClient.setQueryData(['session'], user)
}

export function signedOut(queryClient: QueryClient) {
  queryClient.removeQueries({ predicate: (query) => query.queryKey[0] !== 'session' })
  queryClient.setQueryData(['session'], null)
}

export function useInvitation(token: string) {
  return useQuery({
    queryKey: ['invitation', token],
    // A POST with the token in its body: a URL's path is written to access logs, a body is not.
    queryFn: async ({ signal }) => body(await authClient.POST('/invitations/lookup', { body: { token }, signal })),
    enabled: token !== '',
    retry: false,
  })
}

export function useAcceptInvitation(token: string) {
  const queryClient = useQueryClient()
  return useMutation({
    meta: { signIn: true },
    mutationFn: async (password: string) => body(await authClient.POST('/invitations/accept', { body: { token, password } })).user,
    onSuccess: (user) => signedIn(queryClient, user),
  })
}

// ---------------------------------------------------------------------------------------------
// Catalog

const CATALOG_STALE_MS = 5 * 60_000

export function useCompanyData() {
  return useQuery({
    queryKey: ['company-data'],
    queryFn: async ({ signal }) => body(await client.GET('/company-data', { signal })).data,
    staleTime: CATALOG_STALE_MS,
  })
}

export function useCampaigns() {
  return useQuery({
    queryKey: ['campaigns'],
    queryFn: async ({ signal }) => body(await client.GET('/campaigns', { signal })).campaigns,
    staleTime: CATALOG_STALE_MS,
  })
}

/** How a campaign's letters fared: sent, handed to the post, returned, scanned. Read again on each visit, as the letters move. */
export function useCampaignStats(campaignId: string) {
  return useQuery({
    queryKey: ['cards', 'campaign-stats', campaignId],
    queryFn: async ({ signal }) => body(await client.GET('/campaigns/{campaignId}/stats', { params: { path: { campaignId } }, signal })),
  })
}

export function useFonts() {
  return useQuery({
    queryKey: ['fonts'],
    queryFn: async ({ signal }) => body(await client.GET('/fonts', { signal })).data,
    staleTime: CATALOG_STALE_MS,
  })
}

export function useCardDesign(id: string | undefined) {
  return useQuery({
    queryKey: ['card-design', id],
    queryFn: async ({ signal }) => body(await client.GET('/card-designs/{id}', { params: { path: { id: id! } }, signal })),
    enabled: id !== undefined,
    staleTime: CATALOG_STALE_MS,
  })
}

export function useEnvelopeDesigns(ids: string[]) {
  return useQueries({
    queries: ids.map((id) => ({
      queryKey: ['envelope-design', id],
      queryFn: async ({ signal }: { signal: AbortSignal }) => body(await client.GET('/envelope-designs/{id}', { params: { path: { id } }, signal })),
      staleTime: CATALOG_STALE_MS,
    })),
  })
}

export function useSignatures(ids: string[]) {
  return useQueries({
    queries: ids.map((id) => ({
      queryKey: ['signature', id],
      queryFn: async ({ signal }: { signal: AbortSignal }) => body(await client.GET('/signatures/{id}', { params: { path: { id } }, signal })),
      staleTime: CATALOG_STALE_MS,
    })),
  })
}

/** Images the browser loads itself (with the session cookie): plain URLs, no request of ours. */
export const cardDesignPreviewUrl = (id: string) => `/card-designs/${encodeURIComponent(id)}/preview`
export const signatureDrawingUrl = (id: string) => `/signatures/${encodeURIComponent(id)}/preview`
export const envelopeLogoUrl = (id: string) => `/envelope-designs/${encodeURIComponent(id)}/preview`
export const fontPreviewUrl = (name: string) => `/fonts/${encodeURIComponent(name)}/preview`
export const proofPageUrl = (cardId: string, page: number) => `/cards/${encodeURIComponent(cardId)}/proof.png?page=${page}`
export const proofPdfUrl = (cardId: string) => `/cards/${encodeURIComponent(cardId)}/proof`
export const movementsCsvUrl = '/balance/movements.csv'

// ---------------------------------------------------------------------------------------------
// Letters

export interface CardFilters {
  status?: LetterStatus
  campaignId?: string
  from?: string
  to?: string
  search?: string
}

const CARDS_PAGE = 25

export function useCards(filters: CardFilters) {
  return useInfiniteQuery({
    queryKey: ['cards', 'list', filters],
    queryFn: async ({ pageParam, signal }) =>
      body(await client.GET('/cards', { params: { query: { ...filters, limit: CARDS_PAGE, cursor: pageParam } }, signal })),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (page) => page.nextCursor ?? undefined,
  })
}

export function useRecentCards(limit: number) {
  return useQuery({
    queryKey: ['cards', 'recent', limit],
    queryFn: async ({ signal }) => body(await client.GET('/cards', { params: { query: { limit } }, signal })).data,
  })
}

export function useCardStats(from: string, to: string) {
  return useQuery({
    queryKey: ['cards', 'stats', from, to],
    queryFn: async ({ signal }) => body(await client.GET('/cards/stats', { params: { query: { from, to } }, signal })),
  })
}

export function useCard(cardId: string) {
  return useQuery({
    queryKey: ['cards', 'one', cardId],
    queryFn: async ({ signal }) => body(await client.GET('/cards/{cardId}', { params: { path: { cardId } }, signal })),
  })
}

/** After a letter is created, cancelled or erased: the lists, the counts and the balance are stale. */
function lettersChanged(queryClient: QueryClient) {
  void queryClient.invalidateQueries({ queryKey: ['cards'] })
  void queryClient.invalidateQueries({ queryKey: ['balance'] })
}

export function useCancelCard(cardId: string) {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: async () => body(await client.DELETE('/cards/{cardId}', { params: { path: { cardId } } })),
    onSuccess: (card) => {
      lettersChanged(queryClient)
      queryClient.setQueryData(['cards', 'one', cardId], card)
    },
  })
}

export function useErasePersonalData(cardId: string) {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: async () => {
      await client.DELETE('/cards/{cardId}/personal-data', { params: { path: { cardId } } })
    },
    onSuccess: () => lettersChanged(queryClient),
  })
}

export function useSendSingle() {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: async ({ letter, idempotencyKey }: { letter: SingleLetterBody; idempotencyKey: string }) =>
      body(await client.POST('/single', { body: letter, idempotencyKey })),
    onSuccess: () => lettersChanged(queryClient),
  })
}

/** The handwriting page of a letter as the floor would print it (a PNG); nothing is charged or kept. */
export async function previewSingle(letter: SingleLetterBody, signal: AbortSignal): Promise<Blob> {
  return body(await client.POST('/single/preview', { body: letter, parseAs: 'blob', signal }))
}

export interface BulkRequest {
  campaignId: string
  csv: string
}

/** A CSV of a campaign's recipients, checked (dry run: nothing charged or kept) or sent. */
async function postBulk({ campaignId, csv }: BulkRequest, dryRun: boolean, idempotencyKey?: string): Promise<BulkResult> {
  const result = await client.POST('/cards/bulk', {
    params: { query: { campaignId, dryRun: dryRun ? 'true' : 'false' } },
    // The route takes the CSV as it is: sent as text, not as JSON.
    body: csv as never,
    bodySerializer: (text: unknown) => text,
    headers: { 'Content-Type': 'text/csv; charset=utf-8' },
    ...(idempotencyKey ? { idempotencyKey } : {}),
  })
  return body(result as { data?: BulkResult })
}

export function useBulkDryRun() {
  return useMutation({ mutationFn: (request: BulkRequest) => postBulk(request, true) })
}

export function useBulkSend() {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: ({ idempotencyKey, ...request }: BulkRequest & { idempotencyKey: string }) => postBulk(request, false, idempotencyKey),
    onSuccess: () => lettersChanged(queryClient),
  })
}

// ---------------------------------------------------------------------------------------------
// Suppression list: the addresses a letter came back from, which new letters are refused for

export function useSuppressions() {
  return useInfiniteQuery({
    queryKey: ['suppressions'],
    queryFn: async ({ pageParam, signal }) => body(await client.GET('/suppressions', { params: { query: { limit: 25, cursor: pageParam } }, signal })),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (page) => page.nextCursor ?? undefined,
  })
}

export function useLiftSuppression() {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: async (suppressionId: string) => {
      await client.DELETE('/suppressions/{suppressionId}', { params: { path: { suppressionId } } })
    },
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['suppressions'] }),
  })
}

// ---------------------------------------------------------------------------------------------
// Balance

export function useBalance() {
  return useQuery({
    queryKey: ['balance'],
    queryFn: async ({ signal }) => body(await client.GET('/balance', { signal })),
  })
}

export function useMovements() {
  return useInfiniteQuery({
    queryKey: ['balance', 'movements'],
    queryFn: async ({ pageParam, signal }) => body(await client.GET('/balance/movements', { params: { query: { limit: 25, cursor: pageParam } }, signal })),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (page) => page.nextCursor ?? undefined,
  })
}

// ---------------------------------------------------------------------------------------------
// Developers: API keys, webhooks, events

export function useApiKeys() {
  return useQuery({
    queryKey: ['api-keys'],
    queryFn: async ({ signal }) => body(await client.GET('/api-keys', { signal })).data,
  })
}

export function useCreateApiKey() {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: async (mode: 'live' | 'test') => body(await client.POST('/api-keys', { body: { mode } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['api-keys'] }),
  })
}

export function useRevokeApiKey() {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: async (id: string) => {
      await client.DELETE('/api-keys/{id}', { params: { path: { id } } })
    },
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['api-keys'] }),
  })
}

export function useWebhooks(enabled = true) {
  return useQuery({
    queryKey: ['webhooks'],
    queryFn: async ({ signal }) => body(await client.GET('/webhooks', { signal })).data,
    enabled,
  })
}

/**
 * Whether each endpoint is failing: disabled (the worker gave up on it), or its latest delivery
 * attempt did not get through. GET /webhooks says only the first, so each live endpoint's last
 * attempt is read too (an account has at most 10 per mode).
 */
export function useFailingWebhooks(enabled: boolean) {
  const endpoints = useWebhooks(enabled)
  const active = (endpoints.data ?? []).filter((endpoint) => !endpoint.disabled)
  const latest = useQueries({
    queries: active.map((endpoint) => ({
      queryKey: ['webhooks', endpoint.id, 'deliveries', 'latest'],
      queryFn: async ({ signal }: { signal: AbortSignal }) =>
        body(await client.GET('/webhooks/{id}/deliveries', { params: { path: { id: endpoint.id }, query: { limit: 1 } }, signal })).data[0],
    })),
  })
  const failing = (endpoints.data ?? []).filter((endpoint) => {
    if (endpoint.disabled) return true
    const attempt = latest[active.indexOf(endpoint)]?.data
    return attempt !== undefined && attempt.outcome !== 'delivered'
  })
  return { isLoading: endpoints.isLoading, error: endpoints.error, failing }
}

export function useCreateWebhook() {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: async (endpoint: { url: string; events?: string[] }) =>
      body(await client.POST('/webhooks', { body: endpoint as { url: string; events?: LetterEvent['type'][] } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['webhooks'] }),
  })
}

export function useDeleteWebhook() {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: async (id: string) => {
      await client.DELETE('/webhooks/{id}', { params: { path: { id } } })
    },
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['webhooks'] }),
  })
}

export function useTestWebhook() {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: async (id: string) => body(await client.POST('/webhooks/{id}/test', { params: { path: { id } } })),
    // The test's delivery shows up once the worker has sent it: read the list again shortly after.
    onSuccess: (_queued, id) => setTimeout(() => void queryClient.invalidateQueries({ queryKey: ['webhooks', id] }), 3000),
  })
}

export function useDeliveries(id: string) {
  return useInfiniteQuery({
    queryKey: ['webhooks', id, 'deliveries', 'list'],
    queryFn: async ({ pageParam, signal }) =>
      body(await client.GET('/webhooks/{id}/deliveries', { params: { path: { id }, query: { limit: 10, cursor: pageParam } }, signal })),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (page) => page.nextCursor ?? undefined,
  })
}

export function useRetryDelivery(id: string) {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: async (deliveryId: string) => body(await client.POST('/webhooks/{id}/deliveries/{deliveryId}/retry', { params: { path: { id, deliveryId } } })),
    onSuccess: () => setTimeout(() => void queryClient.invalidateQueries({ queryKey: ['webhooks', id] }), 3000),
  })
}

export function useEvents() {
  return useInfiniteQuery({
    queryKey: ['events'],
    queryFn: async ({ pageParam, signal }) => body(await client.GET('/events', { params: { query: { limit: 10, cursor: pageParam } }, signal })),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (page) => page.nextCursor ?? undefined,
  })
}

// ---------------------------------------------------------------------------------------------
// Team

export function useUsers() {
  return useQuery({
    queryKey: ['users'],
    queryFn: async ({ signal }) => body(await client.GET('/users', { signal })).data,
  })
}

export function useInviteUser() {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: async (invite: { email: string; role: Role }) => body(await client.POST('/users', { body: invite })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['users'] }),
  })
}

export function useChangeRole() {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: async ({ id, role }: { id: string; role: Role }) => body(await client.PATCH('/users/{id}', { params: { path: { id } }, body: { role } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['users'] }),
  })
}

export function useRemoveUser() {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: async (id: string) => {
      await client.DELETE('/users/{id}', { params: { path: { id } } })
    },
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['users'] }),
  })
}
