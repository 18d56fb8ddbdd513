import { execFile } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { GENERATED_FILE } from '../scripts/generated-types.js'

const SCRIPT = fileURLToPath(new URL('../scripts/generate.ts', import.meta.url))

/**
 * The types the routes produce, from a node of their own: this file runs beside others in one
 * module graph, and what they did to it (a shared schema object touched) must not be what is
 * compared with the checked-in file.
 */
async function producedTypes(): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', SCRIPT, '--stdout'], { maxBuffer: 64 * 1024 * 1024 })
  return stdout
}

describe('src/generated/openapi.ts', () => {
  it('is what the routes produce today (run `npm run sdk:generate` and commit it when this fails)', { timeout: 120_000 }, async () => {
    const checkedIn = (await readFile(GENERATED_FILE, 'utf8')).split('\n')
    const produced = (await producedTypes()).split('\n')
    expect(produced.length).toBeGreaterThan(1000)
    // The first lines that differ, so that a failure says what changed.
    const differing = checkedIn.flatMap((line, i) => (line === produced[i] ? [] : [`${i + 1}: - ${line}\n${i + 1}: + ${produced[i]}`])).slice(0, 6)
    expect(differing, 'the checked-in SDK types are stale: run `npm run sdk:generate`').toEqual([])
    expect(produced).toHaveLength(checkedIn.length)
  })
})
