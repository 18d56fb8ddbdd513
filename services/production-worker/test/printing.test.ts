import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { LocalArtifactStore } from '@letters/artifacts'
import { CommandPrinter, SpoolPrinter } from '../src/printer.js'

let directory: string
beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), "letters-print-it's-"))
})
afterAll(() => rm(directory, { recursive: true, force: true }))

const file = (name: string, text: string, location = join(directory, 'store', name)) => ({ name, data: Buffer.from(text), location })

describe('LocalArtifactStore', () => {
  it('keeps a file under its key, replaces it on a second put and says where it lives', async () => {
    const store = new LocalArtifactStore(join(directory, 'artifacts'))
    const path = await store.put('a1/card.pdf', Buffer.from('first'))
    await store.put('a1/card.pdf', Buffer.from('second'))
    expect(path).toBe(join(directory, 'artifacts', 'a1', 'card.pdf'))
    expect((await store.get('a1/card.pdf'))?.toString()).toBe('second')
    expect(await readdir(join(directory, 'artifacts', 'a1'))).toEqual(['card.pdf'])
  })

  it('answers undefined for a key it does not hold and refuses a key outside its directory', async () => {
    const store = new LocalArtifactStore(join(directory, 'artifacts'))
    expect(await store.get('nothing/here.pdf')).toBeUndefined()
    await expect(store.put('../escape.pdf', Buffer.from('x'))).rejects.toThrow('leaves')
  })
})

describe('SpoolPrinter', () => {
  it('drops each file whole into the spool, replacing a reprint', async () => {
    const spool = join(directory, 'spool')
    const printer = new SpoolPrinter(spool)
    await printer.print(file('l1.card.pdf', 'card'))
    await printer.print(file('l1.envelope.pdf', 'envelope'))
    await printer.print(file('l1.card.pdf', 'card again'))
    expect((await readdir(spool)).sort()).toEqual(['l1.card.pdf', 'l1.envelope.pdf'])
    expect(await readFile(join(spool, 'l1.card.pdf'), 'utf8')).toBe('card again')
  })
})

describe('CommandPrinter', () => {
  it('runs the command once per file with {file} replaced by its path, quotes and all', async () => {
    const store = new LocalArtifactStore(join(directory, 'store'))
    const location = await store.put("o'brien.card.pdf", Buffer.from('card'))
    // The operator's own quoting: a log path without quotes in it.
    const log = join(await mkdtemp(join(tmpdir(), 'letters-log-')), 'printed.log')
    const printer = new CommandPrinter(`cat {file} >> '${log}' && echo >> '${log}'`, 5000)
    await printer.print({ name: "o'brien.card.pdf", data: Buffer.from('card'), location })
    await printer.print({ ...file('x.pdf', 'envelope'), location: 's3://bucket/x.pdf' })
    // The second file lives in an object store: the command got a local copy of it.
    expect(await readFile(log, 'utf8')).toBe('card\nenvelope\n')
    await rm(dirname(log), { recursive: true })
  })

  it('fails with the exit code and what the command said', async () => {
    await expect(new CommandPrinter('echo "impresora sin papel" >&2; exit 3 # {file}', 5000).print(file('a.pdf', 'a', 'memory://a'))).rejects.toThrow(
      /exited with 3.*impresora sin papel/,
    )
  })

  it('stops a command that outlives its timeout, with everything it started', async () => {
    const marker = join(await mkdtemp(join(tmpdir(), 'letters-marker-')), 'late')
    await expect(new CommandPrinter(`(sleep 1; touch ${marker}) & sleep 5; echo {file}`, 200).print(file('a.pdf', 'a', 'memory://a'))).rejects.toThrow(
      /stopped after 200 ms \(timeout\)/,
    )
    await new Promise((resolve) => setTimeout(resolve, 1500))
    // The background part of the pipeline was stopped with the rest: it never touched its file.
    await expect(readFile(marker)).rejects.toThrow(/ENOENT/)
    await rm(dirname(marker), { recursive: true })
  })

  it('gives up at the timeout even when a process that left the group holds its output open', async () => {
    const started = Date.now()
    await expect(new CommandPrinter('setsid sleep 3 >&2 & sleep 5 # {file}', 200).print(file('a.pdf', 'a', 'memory://a'))).rejects.toThrow(/timeout/)
    expect(Date.now() - started).toBeLessThan(2500)
  })

  it('succeeds as soon as the command exits, whatever it left running in the background', async () => {
    const started = Date.now()
    await new CommandPrinter('setsid sleep 3 >&2 & exit 0 # {file}', 5000).print(file('a.pdf', 'a', 'memory://a'))
    expect(Date.now() - started).toBeLessThan(2500)
  })

  it('stops the commands still running when the worker shuts down', async () => {
    const printer = new CommandPrinter('sleep 5 # {file}', 10_000)
    const printing = printer.print(file('a.pdf', 'a', 'memory://a'))
    await new Promise((resolve) => setTimeout(resolve, 100))
    printer.stopAll()
    await expect(printing).rejects.toThrow(/stopped by SIGKILL/)
  })

  it('stops the command, with everything it started, when its worker is killed with no chance to clean up', async () => {
    const marker = join(await mkdtemp(join(tmpdir(), 'letters-marker-')), 'printed')
    const printerModule = fileURLToPath(new URL('../src/printer.ts', import.meta.url))
    // A worker of its own, printing one file with a command that takes a second.
    const worker = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        '--input-type=module',
        '-e',
        `
      const { CommandPrinter } = await import(${JSON.stringify(printerModule)})
      const printing = new CommandPrinter('(sleep 1; touch ${marker}.background) & sleep 1; touch ${marker} # {file}', 10000).print({ name: 'a.pdf', data: Buffer.from('a'), location: 'memory://a' })
      setTimeout(() => process.stdout.write('printing\\n'), 100)
      await printing`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    )
    await once(worker.stdout, 'data')
    worker.kill('SIGKILL')
    await once(worker, 'exit')
    await new Promise((resolve) => setTimeout(resolve, 1500))
    // Neither the command nor what it left in the background finished its print.
    await expect(readFile(marker)).rejects.toThrow(/ENOENT/)
    await expect(readFile(`${marker}.background`)).rejects.toThrow(/ENOENT/)
    await rm(dirname(marker), { recursive: true })
  })
})
