#!/usr/bin/env node
// The ten slowest test files of the last run, from vitest's JSON report (test-results/vitest.json),
// with each one's result; the report is kept as test-results/runs/<when>.json, one per run, so that
// runs can be compared. `--all` lists every file. Prints nothing but a note when no run left a report.
import { copyFile, mkdir, readFile, stat } from 'node:fs/promises'
import { join } from 'node:path'

const root = join(import.meta.dirname, '..')
const reportPath = join(root, 'test-results', 'vitest.json')
const all = process.argv.includes('--all')

let report
try {
  report = JSON.parse(await readFile(reportPath, 'utf8'))
} catch {
  process.stdout.write(`No test report at ${reportPath}: the tests did not run to their end.\n`)
  process.exit(0)
}

const when = new Date((await stat(reportPath)).mtimeMs).toISOString().replace(/[:.]/g, '-')
await mkdir(join(root, 'test-results', 'runs'), { recursive: true })
await copyFile(reportPath, join(root, 'test-results', 'runs', `${when}.json`))

const files = report.testResults.map((file) => {
  const tests = file.assertionResults ?? []
  const failed = tests.filter((test) => test.status === 'failed').length
  return {
    path: file.name.startsWith(root) ? file.name.slice(root.length + 1) : file.name,
    seconds: (file.endTime - file.startTime) / 1000,
    result: file.status === 'passed' ? 'passed' : failed > 0 ? `${failed} of ${tests.length} failed` : file.status,
    tests: tests.length,
  }
})
files.sort((a, b) => b.seconds - a.seconds)
const wall = (Math.max(...report.testResults.map((file) => file.endTime)) - report.startTime) / 1000
const shown = all ? files : files.slice(0, 10)
const width = Math.max(...shown.map((file) => file.path.length))
process.stdout.write(
  `\n${all ? 'Every' : 'The ten slowest'} test files of ${files.length} (${report.numPassedTests} of ${report.numTotalTests} tests passed, ${report.numFailedTests} failed; ${wall.toFixed(0)} s from the first file's start to the last one's end):\n`,
)
for (const file of shown) process.stdout.write(`  ${file.seconds.toFixed(1).padStart(7)} s  ${file.path.padEnd(width)}  ${file.tests} tests, ${file.result}\n`)
