import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { configTable, withConfigTable } from '../src/index.js'
import { declaredVariables } from '../src/variables.js'

const operations = new URL('../../../docs/operations.md', import.meta.url)

describe("docs/operations.md's configuration table", () => {
  it('is the one the declarations write (npm run docs:config writes it again)', () => {
    const written = readFileSync(operations, 'utf8')
    expect(withConfigTable(written) === written, 'docs/operations.md differs from packages/config/src/variables.ts: run npm run docs:config').toBe(true)
  })

  it('has a row for every variable declared, the services’ and the operator CLI’s, each named once', () => {
    const names = [...declaredVariables()].map((variable) => variable.env)
    expect(names).toContain('LETTERS_URL')
    expect(new Set(names).size).toBe(names.length)
    const rows = configTable().split('\n').slice(2)
    expect(rows.map((row) => /^\| `([A-Z_]+)` \|/.exec(row)?.[1])).toEqual(names)
  })

  it('shows each default as it is written in the environment, and the default the loader reads is that one', () => {
    for (const variable of declaredVariables()) {
      if (variable.defaultText === undefined) continue
      expect(variable.shownDefault.startsWith(`\`${variable.defaultText}\``), variable.env).toBe(true)
      expect(variable.readFrom({ [variable.env]: variable.defaultText }), variable.env).toEqual(variable.readFrom({}))
    }
  })
})
