import { MutationCache, QueryCache, QueryClient, QueryClientProvider } from '@tanstack/react-query'
import { StrictMode } from 'react'
import { createRoot } from 'react-dom/client'
import { BrowserRouter } from 'react-router'
import { signedOut } from './api'
import { App } from './App'
import { isUnauthorized, LettersApiError } from './client'
import './styles.css'

/** A 401 anywhere but the sign-in itself means the session ended: back to the sign-in page. */
const sessionEnded = (error: unknown) => {
  if (isUnauthorized(error)) signedOut(queryClient)
}

const queryClient: QueryClient = new QueryClient({
  queryCache: new QueryCache({
    onError: (error, query) => {
      if (query.queryKey[0] !== 'session' && query.queryKey[0] !== 'invitation') sessionEnded(error)
    },
  }),
  mutationCache: new MutationCache({
    onError: (error, _variables, _context, mutation) => {
      if (!mutation.meta?.signIn) sessionEnded(error)
    },
  }),
  defaultOptions: {
    queries: {
      staleTime: 30_000,
      // The SDK already tried again where it made sense; an answer from the API (4xx, 5xx) would come back the same.
      retry: (failures, error) => !(error instanceof LettersApiError) && failures < 1,
    },
  },
})

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <BrowserRouter basename="/dashboard">
        <App />
      </BrowserRouter>
    </QueryClientProvider>
  </StrictMode>,
)
