import { constants, setPriority } from 'node:os'
import { performance } from 'node:perf_hooks'
import { renderCard, renderEnvelope, renderProof, type LetterToRender } from './letter.js'
import type { RenderKind } from './render-pool.js'

/** What a render thread hands back: the file and how long drawing it took (the pool records it). */
export interface Rendered {
  pdf: Uint8Array
  seconds: number
}

// A proof may wait; the requests the event loop answers may not. On Linux a thread has its own
// nice value, and setpriority on "this process" (0) changes only the calling thread: the render
// threads give way to the event loop (and to Postgres) when cores are short. Elsewhere the call
// would lower the whole process, so it is left out.
if (process.platform === 'linux') setPriority(0, constants.priority.PRIORITY_BELOW_NORMAL)

const draw: Record<RenderKind, (letter: LetterToRender) => Promise<Buffer>> = { card: renderCard, envelope: renderEnvelope, proof: renderProof }

/** Runs in a worker thread of the render pool (Piscina calls the default export). */
export default async function renderInThread({ kind, letter }: { kind: RenderKind; letter: LetterToRender }): Promise<Rendered> {
  const started = performance.now()
  const pdf = await draw[kind](letter)
  return { pdf, seconds: (performance.now() - started) / 1000 }
}
