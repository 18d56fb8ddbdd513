import { processIo } from './output.js'
import { run } from './run.js'

// The CLI is a tool of its own, not a service configured by packages/config: this entry point is
// the one place it reads its environment.
process.exitCode = await run(
  process.argv,
  { lettersUrl: process.env.LETTERS_URL, adminToken: process.env.ADMIN_TOKEN, databaseUrl: process.env.DATABASE_URL },
  processIo,
)
