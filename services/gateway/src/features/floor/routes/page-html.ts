import { inkNames, letterStatusNames, returnReasonLabels, returnReasons } from '@letters/contracts'
import { inFlightStatuses } from '@letters/letters'
import { batchFileKinds, type BatchFileKind } from '@letters/artifacts'
import { printBatchStatus } from '@letters/db'
import type { FloorBatch, FloorOverview } from '../floor.js'

/** Text for HTML, in an element or a quoted attribute: recipient names are whatever a client sent. */
export function escapeHtml(text: string | number): string {
  return String(text).replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`)
}

/** Builds HTML with every interpolated value escaped; a value made by `html` itself (a Markup) goes in as it is. */
class Markup {
  constructor(readonly value: string) {}
  toString() {
    return this.value
  }
}
type Part = string | number | Markup | Markup[] | null | undefined

export function html(strings: TemplateStringsArray, ...values: Part[]): Markup {
  const text = strings.reduce((out, chunk, i) => {
    const value = values[i - 1]
    const part = value instanceof Markup ? value.value : Array.isArray(value) ? value.map((m) => m.value).join('') : value == null ? '' : escapeHtml(value)
    return out + part + chunk
  })
  return new Markup(text)
}

/** "2 min 5 s", "1 h 3 min", "12 s". */
export function spanishDuration(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000))
  if (seconds < 60) return `${seconds} s`
  const minutes = Math.floor(seconds / 60)
  if (minutes < 60) return seconds % 60 ? `${minutes} min ${seconds % 60} s` : `${minutes} min`
  const hours = Math.floor(minutes / 60)
  if (hours < 48) return minutes % 60 ? `${hours} h ${minutes % 60} min` : `${hours} h`
  return `${Math.floor(hours / 24)} días`
}

const instant = new Intl.DateTimeFormat('es-ES', { dateStyle: 'short', timeStyle: 'medium', timeZone: 'UTC' })
const when = (date: Date | null) => (date ? `${instant.format(date)} UTC` : '—')

const fileLabels: Record<BatchFileKind, string> = { cards: 'Tarjetas (PDF)', envelopes: 'Sobres (PDF)', manifest: 'Manifiesto (CSV)' }
const batchStatusNames = { open: 'abierto', closing: 'entregándose a la impresora', handed: 'entregado' } as const

export interface PageSettings {
  batchMaxLetters: number
  batchMaxWaitMs: number
  printer: string
  now: Date
  /** What a scan does when the page opens: mark the letter mailed, or returned (`?modo=devuelta`, so a reload stays in it). */
  scanMode?: ScanMode
}

/** What a scan does: the envelope leaves for the post (mailed), or the post brought it back (returned). */
export const scanModes = ['mailed', 'returned'] as const
export type ScanMode = (typeof scanModes)[number]

/** Each mode as the page names it, and the hint under the box saying what a scan does in it. */
const scanModeNames: Record<ScanMode, { name: string; detail: string; hint: string }> = {
  mailed: { name: 'Enviada', detail: 'sale a correos', hint: 'El lector escribe el código y pulsa Intro: la carta queda enviada.' },
  returned: {
    name: 'Devuelta',
    detail: 'correos la ha devuelto',
    hint: 'Marca el motivo que indica correos en el sobre y escanéalo: la carta queda devuelta con ese motivo.',
  },
}

/** The query value that opens the page in a mode other than the first one. */
export const SCAN_MODE_QUERY: Record<ScanMode, string | undefined> = { mailed: undefined, returned: 'devuelta' }

/**
 * The scan box and what sets what a scan does: the mode, and in "Devuelta" the reason the post
 * marked on the envelope. No reason is picked when the mode opens, and none stays picked after a
 * letter is returned: each envelope carries its own reason, and one left over from the envelope
 * before would be recorded (and suppress or spare an address) without anyone having read it.
 * Forgetting to pick one costs a second scan; the script says so in red.
 */
function scanForm(mode: ScanMode) {
  const hidden = mode === 'returned' ? null : new Markup('hidden')
  return html`<form id="scan-form" class="mode-${mode}" autocomplete="off">
    <fieldset id="scan-mode" class="choices">
      <legend>Al escanear, la carta queda</legend>
      ${scanModes.map(
        (value) =>
          html`<label class="choice mode"
            ><input type="radio" name="mode" value="${value}" ${mode === value ? new Markup('checked') : null} /> <strong>${scanModeNames[value].name}</strong>
            <span class="muted">(${scanModeNames[value].detail})</span></label
          >`,
      )}
    </fieldset>
    <fieldset id="return-reasons" class="choices" ${hidden}>
      <legend>Motivo de la devolución <span class="muted">(el que marca correos en el sobre)</span></legend>
      ${returnReasons.map((reason) => html`<label class="choice"><input type="radio" name="reason" value="${reason}" /> ${returnReasonLabels[reason]}</label>`)}
    </fieldset>
    <div class="code-row">
      <label for="scan">Código</label>
      <input
        id="scan"
        name="code"
        autofocus
        spellcheck="false"
        autocapitalize="characters"
        maxlength="64"
        placeholder="7KQ2M9XRTB"
        aria-describedby="scan-hint"
      />
      <span id="scan-hint" class="muted" data-mailed="${scanModeNames.mailed.hint}" data-returned="${scanModeNames.returned.hint}"
        >${scanModeNames[mode].hint}</span
      >
    </div>
  </form>`
}

function currentBatch(batch: FloorBatch, settings: PageSettings) {
  const waited = Math.min(batch.ageMs, settings.batchMaxWaitMs)
  return html`<li class="batch" data-batch="${batch.id}">
    <div><strong title="${batch.id}">Lote ${batch.id.slice(0, 8)}</strong> · ${batchStatusNames[batch.status]}</div>
    <div class="stock">
      Cargar: tarjetas <strong class="card-stock">${batch.cardStock ?? 'estándar'}</strong> · sobres
      <strong class="envelope-stock">${batch.envelopeStock ?? 'estándar'}</strong> · tinta <strong class="ink">${inkNames[batch.inkColor]}</strong>
    </div>
    <label
      >Cartas en la bandeja: <span class="tray">${batch.letterCount} / ${settings.batchMaxLetters}</span>
      <progress max="${settings.batchMaxLetters}" value="${Math.min(batch.letterCount, settings.batchMaxLetters)}"></progress
    ></label>
    <label
      >Espera: <span class="age">${spanishDuration(batch.ageMs)} de ${spanishDuration(settings.batchMaxWaitMs)}</span>
      <progress max="${settings.batchMaxWaitMs}" value="${waited}"></progress
    ></label>
  </li>`
}

function recentBatch(batch: FloorBatch) {
  const files =
    batch.status === printBatchStatus.handed
      ? batchFileKinds.map((kind) => html`<a href="/floor/batches/${batch.id}/files/${kind}">${fileLabels[kind]}</a>`)
      : [html`<span class="muted">aún no</span>`]
  return html`<tr data-batch="${batch.id}">
    <td title="${batch.id}">${batch.id.slice(0, 8)}</td>
    <td>${batchStatusNames[batch.status]}</td>
    <td class="num">${batch.letterCount}</td>
    <td class="ink">${inkNames[batch.inkColor]}</td>
    <td>${when(batch.closedAt)}</td>
    <td>${when(batch.handedAt)}</td>
    <td class="files">${files}</td>
  </tr>`
}

const STYLE = `
body { font: 16px/1.4 system-ui, sans-serif; margin: 0 auto; max-width: 72rem; padding: 1rem 1.5rem; color: #1b1b1b; }
h1 { margin: 0 0 .25rem; } h2 { margin: 1.5rem 0 .5rem; font-size: 1.2rem; }
.muted { color: #666; }
#scan-form { border-left: .5rem solid #1e6fb8; padding: .25rem 0 .5rem 1rem; }
#scan-form.mode-returned { border-left-color: #b35900; background: #fff4e5; }
.code-row { display: flex; flex-wrap: wrap; gap: .75rem; align-items: center; margin-top: .5rem; }
.code-row > label { font-weight: 600; }
fieldset.choices { border: 0; padding: 0; margin: .5rem 0; display: flex; flex-wrap: wrap; gap: .4rem 1rem; align-items: center; }
fieldset.choices legend { font-weight: 600; padding: 0; margin-bottom: .35rem; width: 100%; }
.choice { display: inline-flex; align-items: center; gap: .35rem; padding: .3rem .6rem; border: 1px solid #999; border-radius: .4rem; background: #fff; cursor: pointer; }
.choice:has(input:checked) { border-color: #1b1b1b; box-shadow: inset 0 0 0 1px #1b1b1b; background: #eef4fb; }
.mode-returned .choice:has(input:checked) { background: #ffe2bf; }
.choice input { margin: 0; width: 1.1rem; height: 1.1rem; }
.choice:focus-within { outline: 3px solid #1e6fb8; outline-offset: 2px; }
[hidden] { display: none !important; }
#scan { font: 1.6rem/1.2 ui-monospace, monospace; padding: .4rem .6rem; width: 18ch; letter-spacing: .08em; text-transform: uppercase; }
.feedback { margin: .75rem 0; padding: .75rem 1rem; border-radius: .4rem; font-size: 1.3rem; min-height: 1.8rem; }
.feedback.ok, #scans .ok { background: #d8f5dc; color: #0b5d1e; border-left: .5rem solid #1e9e3c; }
.feedback.error, #scans .error { background: #fde0e0; color: #8a1010; border-left: .5rem solid #d12a2a; }
#scans { list-style: none; padding: 0; margin: 0; font-size: .95rem; }
#scans li { padding: .25rem .75rem; margin: .2rem 0; }
.grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(20rem, 1fr)); gap: 0 2rem; }
table { border-collapse: collapse; width: 100%; } th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid #ddd; }
td.num, th.num { text-align: right; } .files a { margin-right: .75rem; white-space: nowrap; }
ul.batches { list-style: none; padding: 0; } .batch label { display: block; } progress { width: 100%; height: 1rem; }
`

/** The page again, in the mode it is in. */
const refreshHref = (mode: ScanMode) => (SCAN_MODE_QUERY[mode] ? `/floor?modo=${SCAN_MODE_QUERY[mode]}` : '/floor')

/** The floor's page: everything interpolated is escaped (html); its script is /floor/scan.js, as the CSP wants. */
export function floorPage(overview: FloorOverview, settings: PageSettings): string {
  const counts = new Map(overview.counts.map((row) => [row.status, row.count]))
  const total = overview.counts.reduce((sum, row) => sum + row.count, 0)
  const page = html`<!doctype html>
    <html lang="es">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>Planta · Cartas</title>
        <style>
          ${new Markup(STYLE)}
        </style>
        <script src="/floor/scan.js" defer></script>
      </head>
      <body>
        <header>
          <h1>Planta de producción</h1>
          <p class="muted">
            Impresión: ${settings.printer} · datos de las ${when(settings.now)} ·
            <a id="refresh" href="${refreshHref(settings.scanMode ?? 'mailed')}">actualizar</a>
          </p>
        </header>

        <main>
          <section aria-labelledby="scan-title">
            <h2 id="scan-title">Escanear sobres</h2>
            ${scanForm(settings.scanMode ?? 'mailed')}
            <div id="feedback" class="feedback" role="status" aria-live="polite"></div>
            <ol id="scans" aria-label="Últimos escaneos"></ol>
          </section>

          <div class="grid">
            <section aria-labelledby="open-title">
              <h2 id="open-title">Lote en curso</h2>
              ${
                overview.current.length > 0
                  ? html`<ul class="batches">
                      ${overview.current.map((batch) => currentBatch(batch, settings))}
                    </ul>`
                  : html`<p class="muted">No hay ningún lote abierto${settings.printer === 'batch' ? '' : ' (esta planta no imprime por lotes)'}.</p>`
              }
            </section>

            <section aria-labelledby="counts-title">
              <h2 id="counts-title">Cartas en curso por estado</h2>
              <table id="counts">
                <tbody>
                  ${inFlightStatuses.map(
                    (status) =>
                      html`<tr data-status="${status}">
                        <td>${letterStatusNames[status]}</td>
                        <td class="num">${counts.get(status) ?? 0}</td>
                      </tr>`,
                  )}
                  <tr>
                    <th>total</th>
                    <th class="num">${total}</th>
                  </tr>
                </tbody>
              </table>
            </section>
          </div>

          <section aria-labelledby="recent-title">
            <h2 id="recent-title">Lotes recientes</h2>
            ${
              overview.recent.length > 0
                ? html`<table id="recent">
                    <thead>
                      <tr>
                        <th>Lote</th>
                        <th>Estado</th>
                        <th class="num">Cartas</th>
                        <th>Tinta</th>
                        <th>Cerrado</th>
                        <th>Entregado</th>
                        <th>Archivos</th>
                      </tr>
                    </thead>
                    <tbody>
                      ${overview.recent.map(recentBatch)}
                    </tbody>
                  </table>`
                : html`<p class="muted">Todavía no se ha cerrado ningún lote.</p>`
            }
          </section>

          <section aria-labelledby="look-title">
            <h2 id="look-title">Cartas fallidas o atascadas (${overview.needsLookTotal})</h2>
            ${
              overview.needsLook.length > 0
                ? html`<table id="needs-look">
                      <thead>
                        <tr>
                          <th>Código</th>
                          <th>Destinatario</th>
                          <th>Ciudad</th>
                          <th>Estado</th>
                          <th>Sin avanzar</th>
                        </tr>
                      </thead>
                      <tbody>
                        ${overview.needsLook.map(
                          (letter) =>
                            html`<tr data-letter="${letter.id}">
                              <td><code>${letter.code}</code></td>
                              <td>${letter.name}</td>
                              <td>${letter.city}</td>
                              <td>${letterStatusNames[letter.status]}</td>
                              <td>${spanishDuration(letter.stuckForSeconds * 1000)}</td>
                            </tr>`,
                        )}
                      </tbody>
                    </table>
                    ${overview.needsLookTotal > overview.needsLook.length ? html`<p class="muted">Se muestran las ${overview.needsLook.length} que llevan más tiempo.</p>` : null}`
                : html`<p class="muted">Ninguna.</p>`
            }
          </section>
        </main>
      </body>
    </html> `
  return page.value
}
