import { defaultClientConditions, defineConfig } from 'vite'

// The dashboard is served by the gateway under /dashboard/ (unknown paths there get index.html),
// so every asset URL is built under that base, and asset names are hashed so they can be cached.
export default defineConfig({
  base: '/dashboard/',
  // No React plugin is installed: Vite 8 compiles TSX with Oxc, told here to use React's automatic runtime.
  oxc: { jsx: { runtime: 'automatic', importSource: 'react' } },
  resolve: {
    // `letters-source` points workspace packages (@letters/sdk) at their TypeScript sources, so
    // the SDK is bundled from source rather than from a build that may be stale or missing.
    conditions: ['letters-source', ...defaultClientConditions],
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
})
