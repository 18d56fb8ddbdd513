import { mkdir, writeFile } from 'node:fs/promises'
import { GENERATED_FILE, generatedTypes } from './generated-types.js'

// `--stdout`: the types printed rather than written, for the test that compares them with the file.
if (process.argv.includes('--stdout')) {
  process.stdout.write(await generatedTypes())
} else {
  await mkdir(new URL('.', GENERATED_FILE), { recursive: true })
  await writeFile(GENERATED_FILE, await generatedTypes())
  process.stdout.write(`wrote ${GENERATED_FILE.pathname}\n`)
}
