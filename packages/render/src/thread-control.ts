import type { LetterToRender } from './letter.js'
/**
 * What a render pool and its threads tell each other: a render asked and its file, the pool that
 * it is closing (so a thread's warm-up stops at the end of the proof in hand), each thread that
 * its warm-up is over. Kept out of render-pool.ts so that a thread loads nothing of the pool's.
 */

/** Handed to every thread as its workerData: `closing[0]` becomes 1 when the pool closes. */
export interface RenderPoolControl {
  closing: SharedArrayBuffer
  /** Whether the thread draws its sample proofs before it takes its first render. */
  warmUp: boolean
  /** Whether the thread runs below the normal CPU priority (Linux only). */
  belowNormal: boolean
}

export function isRenderPoolControl(data: unknown): data is RenderPoolControl {
  return typeof data === 'object' && data !== null && (data as Partial<RenderPoolControl>).closing instanceof SharedArrayBuffer
}

/** Posted by a thread once its warm-up is over, drawn to the end, failed or cut short. */
export interface ThreadReady {
  renderThreadReady: number
  /** The sample proofs it drew first (none when the pool said not to warm up). */
  samples: number
}

export function isThreadReady(message: unknown): message is ThreadReady {
  return typeof message === 'object' && message !== null && typeof (message as Partial<ThreadReady>).renderThreadReady === 'number'
}

export type RenderKind = 'card' | 'envelope' | 'proof' | 'plotter-proof'

/** What a render thread is given: the file to draw, the letter, and for a plotter proof the width of the pen's line (mm). */
export interface RenderTask {
  kind: RenderKind
  letter: LetterToRender
  penWidth?: number | undefined
}

/** What a render thread hands back: the file and how long drawing it took (the pool records it). */
export interface Rendered {
  pdf: Uint8Array
  seconds: number
}
