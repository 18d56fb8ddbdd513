import { readFileSync, readdirSync, readlinkSync } from 'node:fs'
import { isMainThread } from 'node:worker_threads'
import { afterAll, describe, expect, it } from 'vitest'
import { fontNames } from '@letters/contracts'
import { metrics } from '@letters/observability'
import { RenderPool, RenderQueueFull, addressLines, renderCard, renderProof, type LetterToRender } from '../src/index.js'
import { sampleRecipient } from '@letters/test/support/factories'
import { frontJpeg, logoPng, sampleDesign, signaturePng } from './samples.js'

const letter: LetterToRender = {
  letterId: '3f0c6a52-8d0e-4c55-9d5e-5b1f0c1f2a10',
  code: 'BTC0VS66R9',
  fontName: 'kalam',
  message: 'Querida Lucía, gracias por venir a la tienda. '.repeat(20).slice(0, 1000),
  signature: 'Ana, de Papelería Luna',
  recipientLines: addressLines({ ...sampleRecipient, countryName: 'España' }),
  senderLines: ['Papelería Luna'],
}

/** Nanoseconds the process's main thread (the event loop's) has run on a CPU, from Linux's scheduler statistics. */
function loopThreadCpuNs(): number {
  return Number(readFileSync(`/proc/${process.pid}/task/${process.pid}/schedstat`, 'utf8').split(' ')[0])
}

/** The threads of this process running at `nice` (Linux keeps a nice value per thread: field 19 of its stat). */
function threadsAtNice(nice: number): number {
  return readdirSync(`/proc/${process.pid}/task`).filter((tid) => {
    const stat = readFileSync(`/proc/${process.pid}/task/${tid}/stat`, 'utf8')
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]) === nice
  }).length
}

async function proofRenders(): Promise<number> {
  const { values } = await metrics.renderSeconds.get()
  return values.find((value) => value.metricName === 'letters_render_seconds_count' && value.labels.kind === 'proof')?.value ?? 0
}

const pool = new RenderPool({ threads: 1, queueMax: 1 })
afterAll(() => pool.close())

describe('RenderPool', () => {
  it('draws in a worker thread the same bytes as drawing here, and records the render time', async () => {
    const counted = await proofRenders()
    const fromThread = await pool.render('proof', letter)
    expect(fromThread.equals(await renderProof(letter))).toBe(true)
    expect(await proofRenders()).toBe(counted + 1)
  })

  it('draws a letter the same in a thread new to its font as here after other letters in that font', async () => {
    // Fonts are parsed once per thread and their layouts kept across documents: what a thread
    // drew before must not change what it draws next.
    const caveat: LetterToRender = { ...letter, fontName: 'caveat', message: '¡Hola, Lucía! Gracias por venir, ¿nos vemos el sábado en la tienda?' }
    for (const message of ['Hola, Lucía.', 'Gracias por todo, de verdad.', '¿Nos vemos el sábado? ¡Hola!']) await renderProof({ ...caveat, message })
    expect((await pool.render('proof', caveat)).equals(await renderProof(caveat))).toBe(true)
  })

  it('draws a letter with a design the same in a thread, its images handed over as bytes', async () => {
    const design = sampleDesign({ front: await frontJpeg('A6'), logo: await logoPng(), paperColor: '#c9a77c' })
    const drawn: LetterToRender = { ...letter, design: { ...design, signature: { kind: 'image', width: 600, height: 200, png: await signaturePng() } } }
    expect((await pool.render('proof', drawn)).equals(await renderProof(drawn))).toBe(true)
    expect((await pool.render('card', drawn)).equals(await renderCard(drawn))).toBe(true)
  })

  it('starts its threads at once and draws sample proofs in every font before its first render; told not to warm up, neither', async () => {
    const warm = new RenderPool({ threads: 1, queueMax: 1 })
    const cold = new RenderPool({ threads: 1, queueMax: 1, warmUp: false })
    try {
      expect([warm.threads, cold.threads]).toEqual([1, 0])
      await Promise.all([warm.render('proof', letter), cold.render('proof', letter)])
      expect(cold.threads).toBe(1)
      // A thread tells its warm-up is over before it takes a render, on a port of its own.
      await expect.poll(() => [warm.warmUp.threadsReady, cold.warmUp.threadsReady], { timeout: 10_000 }).toEqual([1, 1])
      expect(warm.warmUp.sampleProofs).toBeGreaterThanOrEqual(fontNames.length)
      expect(cold.warmUp.sampleProofs).toBe(0)
    } finally {
      await Promise.all([warm.close(), cold.close()])
    }
  })

  it.runIf(process.platform === 'linux')('runs its threads below the normal priority, unless told to run them at the normal one', async () => {
    const before = threadsAtNice(10)
    const normal = new RenderPool({ threads: 1, queueMax: 1, warmUp: false, belowNormal: false })
    const below = new RenderPool({ threads: 1, queueMax: 1, warmUp: false })
    try {
      await normal.render('proof', letter)
      expect(threadsAtNice(10)).toBe(before)
      await below.render('proof', letter)
      expect(threadsAtNice(10)).toBe(before + 1)
    } finally {
      await Promise.all([normal.close(), below.close()])
    }
  })

  it('keeps the event loop free while it draws', async () => {
    // The CPU time of the loop's own thread, not the wall clock: other processes on the machine
    // can delay this one, but not make it spend CPU on a render another thread draws. Of several
    // groups of renders the cheapest counts, so a garbage collection or the test runner's own
    // messages on this thread during one group change nothing.
    expect(isMainThread).toBe(true)
    const cheapestGroup = async (work: () => Promise<unknown>): Promise<number> => {
      let cheapest = Infinity
      for (let group = 0; group < 5; group++) {
        const before = loopThreadCpuNs()
        for (let render = 0; render < 8; render++) await work()
        cheapest = Math.min(cheapest, loopThreadCpuNs() - before)
      }
      return cheapest
    }
    const inThread = await cheapestGroup(() => pool.render('proof', letter))
    const onLoop = await cheapestGroup(() => renderProof(letter))
    expect(inThread).toBeLessThan(onLoop / 2)
  })

  it('refuses a render at once when the thread is busy and the queue is full, and finishes the others', async () => {
    const results = await Promise.allSettled(Array.from({ length: 4 }, () => pool.render('proof', letter)))
    const refused = results.filter((result) => result.status === 'rejected')
    expect(refused.length).toBeGreaterThanOrEqual(1)
    for (const result of refused) expect(result.reason).toBeInstanceOf(RenderQueueFull)
    expect(results.filter((result) => result.status === 'fulfilled').length).toBeGreaterThanOrEqual(2)
  })
})

describe('a render pool run from the TypeScript sources', () => {
  /** The process's open descriptors on files of tsx's compile cache. */
  const tsxCacheFiles = () =>
    readdirSync('/proc/self/fd').filter((fd) => {
      try {
        return /\/tsx-[^/]*\/[^/]+$/.test(readlinkSync(`/proc/self/fd/${fd}`))
      } catch {
        return false
      }
    }).length

  it('leaves no file of the compile cache open once closed, however many pools come and go', async () => {
    // npm test runs the threads from the build (RUN_FROM_BUILD=1), where tsx compiles nothing:
    // these pools are made to load theirs from the sources, as a run with RUN_FROM_BUILD=0 does.
    const fromBuild = process.env.RUN_FROM_BUILD
    process.env.RUN_FROM_BUILD = '0'
    const before = tsxCacheFiles()
    try {
      for (let round = 0; round < 3; round++) {
        const pool = new RenderPool({ threads: 1, queueMax: 4 })
        await pool.render('card', letter)
        await pool.close()
      }
    } finally {
      if (fromBuild === undefined) delete process.env.RUN_FROM_BUILD
      else process.env.RUN_FROM_BUILD = fromBuild
    }
    expect(tsxCacheFiles() - before).toBe(0)
    // Three pools, each drawing its warm-up proofs before it closes: seconds on a busy machine.
  }, 180_000)
})
