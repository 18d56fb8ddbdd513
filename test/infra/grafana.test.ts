import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { exportedSeries, readsOneReplica, scrapeTimeSeries, seriesAndLabelsOf } from '../support/exported-series.js'

interface Panel {
  type: string
  title: string
  targets?: Array<{ refId: string; expr: string }>
}

const dashboard = async () =>
  JSON.parse(await readFile(fileURLToPath(new URL('../../infra/grafana/letters.json', import.meta.url)), 'utf8')) as { uid: string; panels: Panel[] }

describe('the Grafana dashboard (infra/grafana/letters.json)', () => {
  it('shows intake, the pipeline by status, queue depth, stuck letters, webhook delivery, the floor and Postgres connections', async () => {
    const { uid, panels } = await dashboard()
    expect(uid).toBe('letters')
    const titles = panels.filter((panel) => panel.type !== 'row').map((panel) => panel.title)
    for (const title of ['Letters accepted', 'Letters by status', 'Queue depth', 'Stuck letters', 'Deliveries', 'Printed', 'Postgres connections']) {
      expect(titles).toContain(title)
    }
  })

  it('queries only series the service exports, by labels those series carry', async () => {
    const exported = exportedSeries()
    const graphs = (await dashboard()).panels.filter((panel) => panel.type !== 'row')
    expect(graphs.length).toBeGreaterThan(0)
    for (const panel of graphs) {
      expect(panel.targets?.length, panel.title).toBeGreaterThan(0)
      for (const { expr } of panel.targets!) {
        const { series, labels } = seriesAndLabelsOf(expr)
        expect(series.length, `${panel.title}: ${expr}`).toBeGreaterThan(0)
        for (const name of series) expect(exported.has(name), `${panel.title} reads ${name}, which nothing exports`).toBe(true)
        const carried = new Set(series.flatMap((name) => [...exported.get(name)!]))
        for (const label of labels)
          expect(carried.has(label), `${panel.title}: ${expr} names the label ${label}, which ${series.join(', ')} do not carry`).toBe(true)
      }
    }
  })

  it('shows the pipeline’s state as one gateway reads it (max), never the sum over replicas that each report it', async () => {
    const shared = scrapeTimeSeries()
    const graphs = (await dashboard()).panels.filter((panel) => panel.type !== 'row')
    let checked = 0
    for (const panel of graphs) {
      for (const { expr } of panel.targets!) {
        for (const name of seriesAndLabelsOf(expr).series.filter((series) => shared.has(series))) {
          expect(readsOneReplica(expr, name), `${panel.title}: ${expr}`).toBe(true)
          checked++
        }
      }
    }
    expect(checked).toBeGreaterThan(0)
    expect(readsOneReplica('sum by (status) (letters_stuck)', 'letters_stuck')).toBe(false)
    expect(readsOneReplica('letters_outbox_pending', 'letters_outbox_pending')).toBe(false)
  })

  it('would catch a query of a series nothing exports, or a label it does not carry', async () => {
    const exported = exportedSeries()
    const misnamed = seriesAndLabelsOf('sum by (status) (rate(letters_status_changes_total[5m]))')
    expect(misnamed.labels.every((label) => exported.get('letters_status_changes_total')!.has(label))).toBe(false)
    expect(exported.has(seriesAndLabelsOf('rate(letters_printed_total[5m])').series[0]!)).toBe(false)
  })
})
