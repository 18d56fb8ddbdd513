import { randomUUID } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import { renderCard, renderEnvelope } from '@letters/render'
import { letterToRender } from './letter.js'

export interface RenderThroughput {
  letters: number
  seconds: number
  lettersPerSecond: number
}

/**
 * Letters (card and envelope, the 600-character message) one core renders per second: renders
 * one after the other on this thread for at least `durationMs` (and at least 3 letters), each
 * with its own id, so its own strokes. The first letter warms up (fonts, JIT) and is not counted.
 *
 * Issue 9 gives packages/render a measurement of its own (bench/render-throughput.ts); once it
 * is on this branch, this function calls it instead, so that the renderer's helper and this
 * table measure the same thing.
 */
export async function measureRenderThroughput(durationMs: number): Promise<RenderThroughput> {
  const renderLetter = async () => {
    const letter = letterToRender(randomUUID())
    await renderCard(letter)
    await renderEnvelope(letter)
  }
  await renderLetter()
  const started = performance.now()
  let letters = 0
  while (letters < 3 || performance.now() - started < durationMs) {
    await renderLetter()
    letters++
  }
  const seconds = (performance.now() - started) / 1000
  return { letters, seconds, lettersPerSecond: letters / seconds }
}
