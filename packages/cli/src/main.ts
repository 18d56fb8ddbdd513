import { processIo } from './output.js'
import { run } from './run.js'

// The one place the CLI reads its environment: run() takes its variables from it (LETTERS_URL,
// ADMIN_TOKEN, DATABASE_URL) by their declarations in packages/config, as the services do theirs.
process.exitCode = await run(process.argv, process.env, processIo)
