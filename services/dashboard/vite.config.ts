import { defaultClientConditions, defineConfig, loadEnv } from 'vite'

// The dashboard is served by the gateway under /dashboard/ (unknown paths there get index.html),
// so every asset URL is built under that base, and asset names are hashed so they can be cached.
export default defineConfig(({ command, mode }) => {
  // A build is the production build whatever NODE_ENV its caller runs under: a test runner sets
  // "test", and Vite would then ship React's development build and the packages' development
  // exports, two thirds larger.
  if (command === 'build') process.env.NODE_ENV = 'production'
  // `npm run dev -w @letters/dashboard`: the API is the gateway of `npm start` unless LETTERS_API_URL says otherwise.
  const api = loadEnv(mode, '.', 'LETTERS_').LETTERS_API_URL ?? 'http://127.0.0.1:3000'
  return {
    base: '/dashboard/',

    // No React plugin is installed: Vite 8 compiles TSX with Oxc, told here to use React's automatic runtime.
    oxc: { jsx: { runtime: 'automatic', importSource: 'react' } },
    resolve: {
      // `letters-source` points workspace packages (@letters/sdk) at their TypeScript sources, so
      // the SDK is bundled from source rather than from a build that may be stale or missing.
      conditions: ['letters-source', ...defaultClientConditions],
    },
    server: {
      // The dev server plays the gateway's part: the pages under /dashboard/, every other path
      // passed on to the API. The Host header is kept, so the session's cookies and the CSRF
      // check's Origin are the dev server's own, as they are the gateway's in production.
      proxy: { '^/(?!dashboard(?:/|$))': { target: api, changeOrigin: false } },
    },
    build: {
      outDir: 'dist',
      emptyOutDir: true,
      target: 'es2022',
      assetsDir: 'assets',
      rolldownOptions: {
        onwarn(warning, warn) {
          // React Router's and React Query's modules start with "use client", which only a
          // server-components bundler acts on: for a client-only app it means nothing.
          if (warning.code === 'MODULE_LEVEL_DIRECTIVE' && warning.message.includes('use client')) return
          warn(warning)
        },
      },
    },
  }
})
