#!/usr/bin/env node
// npm run test:load: the whole suite (npm test) with two CPU-bound processes beside it, standing in
// for a machine twice as slow (or twice as busy). Whatever the suite waits for must still come
// within its ceilings. The burners run at the suite's own priority and are killed, by pid, as soon
// as the suite ends or this script is interrupted. Extra arguments go to vitest.
import { spawn } from 'node:child_process'

const BURNERS = Number(process.env.TEST_LOAD_BURNERS ?? 2)
const burners = Array.from({ length: BURNERS }, () => spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }))
const stopBurners = () => {
  for (const burner of burners) if (burner.exitCode === null && burner.signalCode === null) burner.kill('SIGKILL')
}
process.stdout.write(`test:load: ${BURNERS} CPU-bound processes beside the suite (pids ${burners.map((burner) => burner.pid).join(', ')})\n`)

const extra = process.argv.slice(2)
const suite = spawn('npm', ['test', ...(extra.length > 0 ? ['--', ...extra] : [])], { stdio: 'inherit' })
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    suite.kill(signal)
  })
}
suite.on('exit', (code) => {
  stopBurners()
  process.exit(code ?? 1)
})
process.on('exit', stopBurners)
