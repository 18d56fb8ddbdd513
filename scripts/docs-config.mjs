// npm run docs:config: writes docs/operations.md's configuration table from the variables'
// declarations (packages/config/src/variables.ts); the rest of the file is left as it is.
import { readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { withConfigTable } from '@letters/config'

const file = fileURLToPath(import.meta.resolve('../docs/operations.md'))
const before = readFileSync(file, 'utf8')
const after = withConfigTable(before)
if (after === before) console.log('docs/operations.md: the configuration table is up to date')
else {
  writeFileSync(file, after)
  console.log('docs/operations.md: the configuration table was written')
}
