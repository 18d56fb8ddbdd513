import { Histogram } from 'prom-client'
import { pipelineRegistry, registry } from '@letters/observability'

/** A series the service exports, with the labels it carries (Prometheus adds `job` and `instance`). */
export type ExportedSeries = Map<string, Set<string>>

/**
 * The series every gateway reads the same value of at scrape time (the pipeline's state): a
 * query must take one replica's (max, min, avg), never add them up or show each.
 */
export function scrapeTimeSeries(): Set<string> {
  return new Set(pipelineRegistry.getMetricsAsArray().map((metric) => (metric as unknown as { name: string }).name))
}

/** Whether every scrape-time series `expr` reads is inside a max, min or avg aggregation. */
export function readsOneReplica(expr: string, series: string): boolean {
  const unquoted = expr.replace(/"[^"]*"/g, '""')
  const at = unquoted.indexOf(series)
  const before = unquoted.slice(0, at)
  // The innermost aggregation opened before the series and not closed yet.
  const aggregations = [...before.matchAll(/\b(sum|max|min|avg|count)\b(?:\s+(?:by|without)\s*\([^)]*\))?\s*\(/g)]
  const open = aggregations.filter((match) => {
    const after = before.slice(match.index + match[0].length)
    return (after.match(/\(/g)?.length ?? 0) >= (after.match(/\)/g)?.length ?? 0)
  })
  return ['max', 'min', 'avg'].includes(open.at(-1)?.[1] ?? '')
}

/** Every series the gateway's and the workers' registries export: a histogram adds _bucket (with `le`), _sum and _count. */
export function exportedSeries(): ExportedSeries {
  const scrapeLabels = ['job', 'instance']
  const series: ExportedSeries = new Map([['up', new Set(scrapeLabels)]])
  for (const registered of [...registry.getMetricsAsArray(), ...pipelineRegistry.getMetricsAsArray()]) {
    const { name, labelNames = [] } = registered as unknown as { name: string; labelNames?: string[] }
    const labels = [...labelNames, ...scrapeLabels]
    series.set(name, new Set(labels))
    if (registered instanceof Histogram) {
      series.set(`${name}_bucket`, new Set([...labels, 'le']))
      for (const suffix of ['_sum', '_count']) series.set(name + suffix, new Set(labels))
    }
  }
  return series
}

/**
 * The series a PromQL expression reads and the labels it names (in selectors and in
 * `by`/`without` groupings). Our series all start with letters_, http_ or webhook_ (plus
 * Prometheus's own `up`); label values are quoted and left out.
 */
export function seriesAndLabelsOf(expr: string): { series: string[]; labels: string[] } {
  const unquoted = expr.replace(/"[^"]*"/g, '""')
  const series = [...unquoted.matchAll(/\b(letters_[a-z0-9_]+|http_[a-z0-9_]+|webhook_[a-z0-9_]+|up)\b/g)].map((match) => match[1]!)
  const selectorLabels = [...unquoted.matchAll(/\{([^}]*)\}/g)].flatMap((match) =>
    [...match[1]!.matchAll(/([a-z_][a-z0-9_]*)\s*(=~|!~|!=|=)/g)].map((label) => label[1]!),
  )
  const groupingLabels = [...unquoted.matchAll(/\b(?:by|without)\s*\(([^)]*)\)/g)].flatMap((match) =>
    match[1]!
      .split(',')
      .map((label) => label.trim())
      .filter(Boolean),
  )
  return { series, labels: [...selectorLabels, ...groupingLabels] }
}
