import { processIo } from './output.js'
import { run } from './run.js'

// No environment given: packages/config (cliEnvironment), the one reader of process.env, reads
// LETTERS_URL, ADMIN_TOKEN and DATABASE_URL by their declarations, as the services' variables are.
process.exitCode = await run(process.argv, undefined, processIo)
