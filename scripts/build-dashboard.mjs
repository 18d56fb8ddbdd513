// Builds the dashboard (services/dashboard, Vite) for `npm start` when its build is missing or
// older than its sources or the SDK it calls the API through; otherwise does nothing, so that a
// start after the first costs no build. `npm run build` always builds it.
import { spawnSync } from 'node:child_process'
import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'

const built = 'services/dashboard/dist/index.html'
const sources = [
  'services/dashboard/src',
  'services/dashboard/index.html',
  'services/dashboard/vite.config.ts',
  'services/dashboard/package.json',
  'packages/sdk/src',
]

/** The newest modification time under `path` (a file, or a folder walked whole). */
function newest(path) {
  const stats = statSync(path, { throwIfNoEntry: false })
  if (!stats) return 0
  if (!stats.isDirectory()) return stats.mtimeMs
  return Math.max(0, ...readdirSync(path).map((name) => newest(join(path, name))))
}

const builtAt = statSync(built, { throwIfNoEntry: false })?.mtimeMs ?? 0
if (builtAt > 0 && sources.every((source) => newest(source) <= builtAt)) process.exit(0)
process.stdout.write('Building the dashboard (services/dashboard)…\n')
const result = spawnSync('npm', ['run', '-s', 'build', '-w', '@letters/dashboard'], { stdio: 'inherit' })
process.exit(result.status ?? 1)
