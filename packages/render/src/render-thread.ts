import { constants, setPriority } from 'node:os'
import { performance } from 'node:perf_hooks'
import { fontNames } from '@letters/contracts'
import { addressLines, renderCard, renderEnvelope, renderProof, type LetterToRender } from './letter.js'
import { renderPlotterProof } from './plotter/plot.js'
import type { RenderKind, RenderTask } from './render-pool.js'

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

const draw: Record<RenderKind, (letter: LetterToRender, penWidth: number | undefined) => Promise<Buffer>> = {
  card: renderCard,
  envelope: renderEnvelope,
  proof: renderProof,
  'plotter-proof': (letter, penWidth) => {
    if (penWidth === undefined) throw new TypeError("a plotter proof needs the pen's width")
    return renderPlotterProof(letter, penWidth)
  },
}

/** Proofs drawn in each font before the thread takes its first render. */
const WARM_UP_ROUNDS = 4

/**
 * A thread's first render of a font parsed the font, and its first renders ran the drawing code
 * before the engine had compiled it: a client's first proofs took several times a render. The
 * thread draws sample proofs in every font before it takes tasks, at the pool's start rather than in front of a client. The fonts' layout caches keep
 * what the samples laid out, which changes no later drawing: a layout depends on the text only.
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
      const letterId = `00000000-0000-4000-8000-${String(round).padStart(12, '0')}`
      await renderProof({
        letterId,
        code: 'WARMUP0001',
        fontName,
        message,
        signature: 'Ana, de Papelería Luna',
        recipientLines,
        senderLines: ['Papelería Luna', 'Calle Sierpes 4', '41004 Sevilla'],
      })
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
// each render then fails with that same cause, answered to whoever asked for it.
export default warmUp().then(
  () => renderInThread,
  () => renderInThread,
)
