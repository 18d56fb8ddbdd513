// The architecture rules, checked by `npm run lint` (dependency-cruiser). What each protects is
// in docs/development.md ("How the gateway is arranged"); test/architecture shows each one
// failing on a deliberate violation.
const gateway = '^services/gateway/src'
const feature = `${gateway}/features/[^/]+/`

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'no-cycle',
      comment: 'A module that imports itself through others cannot be read, tested or loaded on its own.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'features-not-into-plugins',
      comment: 'A feature uses what plugins decorate the app with (app.db, app.queues), never a plugin module: what features share lives in src/common.',
      severity: 'error',
      from: { path: `${gateway}/features/` },
      to: { path: `${gateway}/plugins/` },
    },
    {
      name: 'shell-knows-no-feature',
      comment: 'The shell (app.ts, plugins/) and what it shares (common/) are handed the features by server.ts; they never import one.',
      severity: 'error',
      from: { path: `${gateway}/(app\\.ts|plugins/|common/)` },
      to: { path: `${gateway}/(features/|server\\.ts|main\\.ts|openapi-document\\.ts|demo/)` },
    },
    {
      name: 'common-below-the-shell',
      comment: 'What the shell and the features share imports neither: a feature cannot reach a plugin through common/.',
      severity: 'error',
      from: { path: `${gateway}/common/` },
      to: { path: `${gateway}/(app\\.ts|plugins/)` },
    },
    {
      name: 'features-not-into-the-list',
      comment: 'A feature does not know which other features the gateway serves: only server.ts reads the list.',
      severity: 'error',
      from: { path: `${gateway}/features/[^/]+/` },
      to: { path: `${gateway}/(features/index\\.ts|server\\.ts|main\\.ts|openapi-document\\.ts|app\\.ts|demo/)` },
    },
    {
      name: 'packages-not-into-services',
      comment: 'The packages are the layer below the services: a package that imported a service could not be used without it.',
      severity: 'error',
      from: { path: '^packages/[^/]+/src/' },
      to: { path: '^services/' },
    },
    {
      name: 'no-reaching-into-another-feature',
      comment: "Another feature's internals (its routes, queries, helpers) are its own: what it offers others is in its index.ts.",
      severity: 'error',
      from: { path: `${gateway}/features/([^/]+)/` },
      to: { path: feature, pathNot: [`${gateway}/features/$1/`, `${feature}index\\.ts$`] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(node_modules|dist|test|coverage)/' },
    // Type-only imports count: a cycle through types is still a cycle for a reader.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    // Our workspaces are reached by name through their package.json `exports` (`@letters/gateway/server`):
    // read, so that an import by name is followed to its file like a relative one.
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
    reporterOptions: { text: { highlightFocused: true } },
  },
}
