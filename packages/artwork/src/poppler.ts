import { spawn } from 'node:child_process'
import { RASTERIZE_TIMEOUT_MS } from './limits.js'

export type RunResult = { ok: true; stdout: Buffer } | { ok: false; reason: 'timeout' | 'failed' | 'too-large'; detail: string }

/** The address space a poppler process may take, in KiB: far more than any page we render needs. */
const POPPLER_MEMORY_KB = 2 * 1024 * 1024

/** More than any page we render at our sizes produces; a runaway output is cut off rather than buffered. */
const MAX_OUTPUT_BYTES = 256 * 1024 * 1024

/**
 * Runs one of poppler's tools with the PDF on stdin and its image on stdout, so no temporary file
 * is left behind. The process is killed when it outlives `timeoutMs` (a hostile or pathological
 * PDF can keep a renderer busy for minutes) or writes more than we would ever read.
 */
export function runPoppler(
  command: 'pdftoppm' | 'pdftocairo' | 'pdfinfo',
  args: string[],
  input: Uint8Array,
  timeoutMs = RASTERIZE_TIMEOUT_MS,
): Promise<RunResult> {
  return new Promise((resolve) => {
    // Under a memory limit of its own: a PDF built to expand a thousandfold (compressed object
    // streams) fails there, instead of growing a process until the machine runs out.
    const child = spawn('sh', ['-c', `ulimit -v ${POPPLER_MEMORY_KB}; exec "$0" "$@"`, command, ...args], { stdio: ['pipe', 'pipe', 'pipe'] })
    const stdout: Buffer[] = []
    let stdoutBytes = 0
    let stderr = ''
    let settled: RunResult | undefined
    const finish = (result: RunResult) => {
      if (settled) return
      settled = result
      clearTimeout(timer)
      resolve(result)
    }
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      finish({ ok: false, reason: 'timeout', detail: `${command} did not finish within ${timeoutMs} ms` })
    }, timeoutMs)

    child.stdout.on('data', (chunk: Buffer) => {
      stdoutBytes += chunk.length
      if (stdoutBytes > MAX_OUTPUT_BYTES) {
        child.kill('SIGKILL')
        finish({ ok: false, reason: 'too-large', detail: `${command} wrote more than ${MAX_OUTPUT_BYTES} bytes` })
        return
      }
      stdout.push(chunk)
    })
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < 4000) stderr += chunk.toString('utf8')
    })
    child.on('error', (error) => finish({ ok: false, reason: 'failed', detail: `${command}: ${error.message}` }))
    child.on('close', (code, signal) => {
      if (code === 0) finish({ ok: true, stdout: Buffer.concat(stdout) })
      else finish({ ok: false, reason: 'failed', detail: `${command} exited with ${code ?? signal}: ${stderr.trim()}` })
    })
    // The tool may exit before reading all its input (a broken PDF): the broken pipe is its answer, not ours.
    child.stdin.on('error', () => {})
    child.stdin.end(input)
  })
}
