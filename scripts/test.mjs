#!/usr/bin/env node
// npm test: the typecheck and the build side by side (each is one tsc on one core; the tests run
// the services from the build, see docs/development.md), then every test with vitest. Extra
// arguments go to vitest. Fails with the first failing step's code; the tests do not run on a tree
// that does not typecheck or build.
import { spawn } from 'node:child_process'

/** Runs a command with this terminal; resolves with its exit code (1 if a signal ended it). */
function run(command, args) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: 'inherit' })
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)))
  })
}

const fromBuild = process.env.RUN_FROM_BUILD !== '0'
const [typecheck, build] = await Promise.all([run('npm', ['run', '-s', 'typecheck']), fromBuild ? run('npm', ['run', '-s', 'build']) : 0])
if (typecheck !== 0 || build !== 0) process.exit(typecheck || build)
process.exit(await run(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', ...process.argv.slice(2)]))
