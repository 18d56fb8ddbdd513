import type { Logger } from 'pino'
import type { ArtifactStore } from '@letters/artifacts'
import type { Db } from '@letters/db'
import type { PlotterSettings } from '@letters/render'
import type { BatchRules } from './batch-tray.js'
import type { Printer } from './printer.js'

/** What producing a letter needs of the worker: its database, its files, its printer and its settings. */
export interface Floor {
  db: Db
  store: ArtifactStore
  printer: Printer
  log: Logger
  /** The longest the printer may take with one file (PRINT_TIMEOUT_MS): how long a run waits for another's handoff. */
  printTimeoutMs: number
  /** What the floor prints with (PRINTER): PDFs for a printer (the default), or strokes for a pen plotter, with its settings. */
  output?: { kind: 'pdf' } | { kind: 'plotter'; settings: PlotterSettings }
  /** FLOOR_COUNTRY: envelopes to it carry no country line. */
  floorCountry: string
  /** PUBLIC_BASE_URL: a card's QR code links to its short link there. Absent: a letter with a QR code cannot be drawn (it fails). */
  publicBaseUrl?: string | undefined
  /** PRINTER=batch: letters go into a tray instead of to the printer (README, Batch printing); `poke` wakes this worker's closer. */
  batching?: { rules: BatchRules; poke(): void } | undefined
}
