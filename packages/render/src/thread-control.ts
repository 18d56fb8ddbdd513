/**
 * What a render pool and its threads tell each other, apart from the renders: the pool that it
 * is closing (so a thread's warm-up stops at the end of the proof in hand), each thread that its
 * warm-up is over. Kept out of render-pool.ts so that a thread loads nothing of the pool's.
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
