import { constants, setPriority } from 'node:os'
import { performance } from 'node:perf_hooks'
import { parentPort, threadId, workerData } from 'node:worker_threads'
import { cardFormatNames, envelopeFormatNames, fontNames } from '@letters/contracts'
import type { DesignToRender } from './design.js'
import { addressLines, renderCard, renderEnvelope, renderProof, type LetterToRender } from './letter.js'
import { renderPlotterProof } from './plotter/plot.js'
import { isRenderPoolControl, type RenderKind, type RenderTask, type Rendered, type ThreadReady } from './thread-control.js'

const draw: Record<RenderKind, (letter: LetterToRender, penWidth: number | undefined) => Promise<Buffer>> = {
  card: renderCard,
  envelope: renderEnvelope,
  proof: renderProof,
  'plotter-proof': (letter, penWidth) => {
    if (penWidth === undefined) throw new TypeError("a plotter proof needs the pen's width")
    return renderPlotterProof(letter, penWidth)
  },
}

/** Set by the pool when it closes: the warm-up stops at the end of the proof it is drawing. */
const control = isRenderPoolControl(workerData) ? workerData : undefined
const closing = control && new Int32Array(control.closing)

// A proof may wait; the requests the event loop answers may not. On Linux a thread has its own
// nice value, and setpriority on "this process" (0) changes only the calling thread: the render
// threads give way to the event loop (and to Postgres) when cores are short. Elsewhere the call
// would lower the whole process, so it is left out.
if (process.platform === 'linux' && control?.belowNormal !== false) setPriority(0, constants.priority.PRIORITY_BELOW_NORMAL)
const poolClosing = () => closing !== undefined && Atomics.load(closing, 0) === 1

/** The warm-up's proofs drawn so far, told to the pool when it is over. */
let samplesDrawn = 0

/** Proofs drawn in each font before the thread takes its first render. */
const WARM_UP_ROUNDS = 4

/**
 * A design for the warm-up, in the `round`th of each format: a signature's paths, a return
 * address and paper colour, no images (a JPEG goes in as its bytes, and a PNG is prepared once
 * per image whatever the warm-up drew).
 */
const warmUpDesign = (round: number): DesignToRender => ({
  card: { format: cardFormatNames[round % cardFormatNames.length]!, production: 'preprinted', front: null },
  envelope: { format: envelopeFormatNames[round % envelopeFormatNames.length]!, paperColor: '#c9a77c', logo: null },
  signature: { kind: 'paths', width: 100, height: 40, paths: ['M 5 30 C 15 0 30 0 40 30 Q 55 10 70 30 L 95 24', 'M 2 37 Q 50 31 98 36'] },
  returnAddressLines: ['Papelería Luna', 'Calle Sierpes 4, 2º B', '41004 Sevilla'],
})

/**
 * A thread's first render of a font parsed the font, and its first renders ran the drawing code
 * before the engine had compiled it: a client's first proofs took several times a render. The
 * thread draws sample proofs in every font before it takes tasks, at the pool's start rather than in front of a client. The fonts' layout caches keep
 * what the samples laid out, which changes no later drawing: a layout depends on the text only.
 * Each round also draws one letter with a design, so both layouts are compiled.
 */
async function warmUp(): Promise<void> {
  const message =
    'Querida Lucía: ¡muchas gracias por venir a la inauguración! ¿Te acuerdas de la mesa de papel japonés? Ya tenemos los sobres a juego, en azul y en verde. ' +
    'Un abrazo muy fuerte para Marta y los niños; esperamos veros pronto por Sevilla, quizá en primavera, cuando los naranjos están en flor y las tardes son largas.'
  const recipientLines = addressLines({
    name: 'Lucía',
    surname: 'García',
    company: null,
    address: 'Calle Mayor 1, 3.º izquierda',
    zip: '28013',
    city: 'Madrid',
    province: 'Madrid',
    countryName: 'España',
  })
  for (let round = 0; round < WARM_UP_ROUNDS; round++) {
    for (const fontName of fontNames) {
      if (poolClosing()) return
      const letterId = `00000000-0000-4000-8000-${String(round).padStart(12, '0')}`
      const letter: LetterToRender = {
        letterId,
        code: 'WARMUP0001',
        fontName,
        message,
        signature: 'Ana, de Papelería Luna',
        recipientLines,
        senderLines: ['Papelería Luna', 'Calle Sierpes 4', '41004 Sevilla'],
      }
      await renderProof(letter)
      samplesDrawn++
      // One letter with a design per round, not per font: the layout code is shared, and a
      // longer warm-up only keeps the cores from the event loop that answers requests meanwhile.
      if (fontName === fontNames[0]) {
        await renderProof({ ...letter, design: warmUpDesign(round) })
        samplesDrawn++
      }
    }
  }
}

/** Draws one file in a worker thread of the render pool. */
async function renderInThread({ kind, letter, penWidth }: RenderTask): Promise<Rendered> {
  const started = performance.now()
  const pdf = await draw[kind](letter, penWidth)
  return { pdf, seconds: (performance.now() - started) / 1000 }
}

// Piscina calls the default export; given a promise, it waits for it before the thread takes
// tasks. (Not top-level await: Piscina tries require() first, which refuses such a module.) A
// warm-up that fails (a font file missing) must not stop the thread from starting, over and over:
// each render then fails with that same cause, answered to whoever asked for it. The pool is
// told when the warm-up is over: until then the thread is drawing, and it must not be stopped
// mid-drawing (see RenderPool.close).
export default (control?.warmUp === false ? Promise.resolve() : warmUp())
  .catch(() => undefined)
  .then(() => {
    const ready: ThreadReady = { renderThreadReady: threadId, samples: samplesDrawn }
    parentPort?.postMessage(ready)
    return renderInThread
  })
