import { readFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { GENERATED_FILE, generatedTypes } from '../scripts/generated-types.js'

describe('src/generated/openapi.ts', () => {
  it('is what the routes produce today (run `npm run sdk:generate` and commit it when this fails)', async () => {
    const checkedIn = await readFile(GENERATED_FILE, 'utf8')
    expect(checkedIn === (await generatedTypes()), 'the checked-in SDK types are stale: run `npm run sdk:generate`').toBe(true)
  })
})
