import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { repositoryRoot } from '@letters/test/support/processes'

describe('npm run bench -- --against', () => {
  it('refuses a ref the clone does not have, saying which, and exits 1', async () => {
    const run = promisify(execFile)(process.execPath, ['--import', 'tsx', 'bench/src/main.ts', '--against', 'no-such-release-ref'], { cwd: repositoryRoot })
    const failure = await run.then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    )
    expect(failure?.code).toBe(1)
    expect(failure?.stderr).toContain("no-such-release-ref is not in this clone's history")
  }, 60_000)
})
