import { availableParallelism } from 'node:os'
import { Piscina } from 'piscina'
import { moduleLaunch } from '@letters/config'
import { metrics } from '@letters/observability'
import type { LetterToRender } from './letter.js'
import { isThreadReady, type RenderPoolControl, type RenderKind, type RenderTask, type Rendered } from './thread-control.js'

export type { RenderKind, RenderTask } from './thread-control.js'

/** Every render thread is busy and `queueMax` renders already wait: the caller should come back later. */
export class RenderQueueFull extends Error {
  override name = 'RenderQueueFull'
}

// Piscina rejects with plain Errors; these are its two messages for a full queue.
const QUEUE_FULL = /^(Task queue is at limit|No task queue available and all Workers are busy)$/

/**
 * How long closing waits for the threads still warming up to finish the proof in hand. A proof
 * takes milliseconds, a second on a starved machine; past this the threads are stopped anyway.
 */
const WARM_UP_STOP_WAIT_MS = 5000

/** One thread per core, less the one the event loop runs on; at least one. */
export function defaultRenderThreads(): number {
  return Math.max(1, availableParallelism() - 1)
}

/** The render thread's module, and how it loads from the sources or the build (moduleLaunch). */
function threadSetup(): { filename: string; execArgv: string[]; env: NodeJS.ProcessEnv } {
  const { url, execArgv, env } = moduleLaunch(import.meta.url, 'render-thread')
  return { filename: url.href, execArgv, env }
}

export interface RenderPoolOptions {
  /** Worker threads; by default `defaultRenderThreads()`. */
  threads?: number | undefined
  /** Renders that may wait for a free thread; one more is refused with RenderQueueFull. */
  queueMax: number
  /**
   * Whether the threads start with the pool and draw sample proofs before its first render
   * (default true): a client's first proofs are then as fast as the later ones, for a few seconds
   * of CPU at the start. Without it a thread starts at the first render that needs it, and a
   * process that draws nothing starts none.
   */
  warmUp?: boolean | undefined
  /**
   * Whether the threads run below the normal CPU priority (default true, Linux only): when cores
   * are short the event loop answering requests goes first, and a proof waits.
   */
  belowNormal?: boolean | undefined
}

/**
 * Draws PDFs in worker threads, so that a render (a few milliseconds for a 600-character card
 * and its envelope) never blocks the event loop that answers every other request. The threads
 * start with the pool and stay, each drawing sample proofs first (see render-thread.ts); a
 * process keeps one pool and closes it when it stops.
 */
export class RenderPool {
  private readonly pool: Piscina
  /** `closing[0]`, shared with every thread: 1 once the pool closes, which stops their warm-ups. */
  private readonly closing = new Int32Array(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT))
  /** The threads whose warm-up is over: from then on they draw only the renders they are given. */
  private readonly warmedUp = new Set<number>()
  private samples = 0

  constructor(options: RenderPoolOptions) {
    const threads = options.threads ?? defaultRenderThreads()
    const warmUp = options.warmUp ?? true
    const control: RenderPoolControl = { closing: this.closing.buffer, warmUp, belowNormal: options.belowNormal ?? true }
    this.pool = new Piscina({
      ...threadSetup(),
      minThreads: warmUp ? threads : 0,
      maxThreads: threads,
      // A thread, once started, stays: starting one costs its imports and their compilation.
      idleTimeout: Infinity,
      maxQueue: options.queueMax,
      workerData: control,
    })
    this.pool.on('message', (message: unknown) => {
      if (!isThreadReady(message)) return
      this.warmedUp.add(message.renderThreadReady)
      this.samples += message.samples
    })
  }

  /** Threads whose warm-up is over (or was skipped), and the sample proofs they drew in it. */
  get warmUp(): { threadsReady: number; sampleProofs: number } {
    return { threadsReady: this.warmedUp.size, sampleProofs: this.samples }
  }

  /** Threads started so far. */
  get threads(): number {
    return this.pool.threads.length
  }

  /** Renders finished (or failed) since the pool started. */
  get completed(): number {
    return this.pool.completed
  }

  /** Draws one file; a plotter proof needs `penWidth` (the floor's PLOTTER_PEN_WIDTH_MM), as its strokes depend on it. */
  async render(kind: RenderKind, letter: LetterToRender, penWidth?: number): Promise<Buffer> {
    let rendered: Rendered
    try {
      const task: RenderTask = { kind, letter, penWidth }
      rendered = (await this.pool.run(task)) as Rendered
    } catch (error) {
      if (error instanceof Error && QUEUE_FULL.test(error.message))
        throw new RenderQueueFull(`${this.pool.queueSize} renders are waiting already`, { cause: error })
      throw error
    }
    metrics.renderSeconds.observe({ kind }, rendered.seconds)
    // The thread's Buffer arrives as a plain Uint8Array: view the same memory as a Buffer.
    return Buffer.from(rendered.pdf.buffer, rendered.pdf.byteOffset, rendered.pdf.byteLength)
  }

  /**
   * Lets the renders in hand finish, then stops the threads. Never a thread that is drawing:
   * stopping a thread ends its JavaScript wherever it is, and pdfkit compresses every stream
   * with zlib.deflateSync, whose native handle is made one statement before it is initialised;
   * a thread stopped between the two leaves an uninitialised handle, and Node's cleanup of it
   * aborts the whole process (node_zlib.cc, "close before init"). Piscina waits for the renders
   * it was given, not for a thread's warm-up (drawn before it takes any): a warm-up is told to
   * stop, and closing waits until each thread has put down the proof in hand.
   */
  async close(): Promise<void> {
    Atomics.store(this.closing, 0, 1)
    const until = Date.now() + WARM_UP_STOP_WAIT_MS
    while (this.pool.threads.some((thread) => !this.warmedUp.has(thread.threadId)) && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    await this.pool.close()
  }
}
