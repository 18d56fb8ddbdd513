import { mkdir, writeFile } from 'node:fs/promises'
import { GENERATED_FILE, generatedTypes } from './generated-types.js'

await mkdir(new URL('.', GENERATED_FILE), { recursive: true })
await writeFile(GENERATED_FILE, await generatedTypes())
process.stdout.write(`wrote ${GENERATED_FILE.pathname}\n`)
