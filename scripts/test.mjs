#!/usr/bin/env node
// npm test: the typechecks and the build side by side (each is one tsc on one core; the tests run
// the services from the build, see docs/development.md), then every test with vitest. Extra
// arguments go to vitest. Fails with the first failing step's code; the tests do not run on a tree
// that does not typecheck or build.
import { spawn } from 'node:child_process'

/** Runs a command with this terminal; resolves with its exit code (1 if a signal ended it). */
function run(command, args, env = process.env) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: 'inherit', env })
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)))
  })
}

const fromBuild = process.env.RUN_FROM_BUILD !== '0'
// Three processes of one core each; the two typechecks apart, since the services' is the longest step.
const steps = ['typecheck:services', 'typecheck:dashboard', ...(fromBuild ? ['build'] : [])]
const failed = (await Promise.all(steps.map((step) => run('npm', ['run', '-s', step])))).find((code) => code !== 0)
if (failed !== undefined) process.exit(failed)
// The build is fresh: the run's global setup need not bring it up to date again.
const env = fromBuild ? { ...process.env, TEST_BUILD_FRESH: '1' } : process.env
process.exit(await run(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', ...process.argv.slice(2)], env))
