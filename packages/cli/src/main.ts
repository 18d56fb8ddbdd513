import { processIo } from './output.js'
import { run } from './run.js'

// No environment given: packages/config (cliEnvironment), the one reader of the process's
// environment, reads LETTERS_URL, ADMIN_TOKEN and DATABASE_URL by their declarations.
process.exitCode = await run(process.argv, undefined, processIo)
