import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { pipelineRegistry, registry } from '@letters/observability'

const infra = (name: string) => fileURLToPath(new URL(`../../infra/prometheus/${name}`, import.meta.url))

interface Rule {
  alert: string
  expr: string
  for?: string
  labels?: Record<string, string>
  annotations?: Record<string, string>
}

/** The series names a registry exports: histograms add _bucket, _sum and _count. */
async function exportedSeries(): Promise<Set<string>> {
  const names = new Set<string>(['up'])
  for (const metric of [...(await registry.getMetricsAsJSON()), ...(await pipelineRegistry.getMetricsAsJSON())]) {
    names.add(metric.name)
    if (String(metric.type) === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(metric.name + suffix)
  }
  return names
}

describe('the example Prometheus alert rules', () => {
  it('parse, and every alert names only series the service exports', async () => {
    const rules = parse(await readFile(infra('alerts.yml'), 'utf8')) as { groups: Array<{ name: string; rules: Rule[] }> }
    const all = rules.groups.flatMap((group) => group.rules)
    expect(all.map((rule) => rule.alert)).toContain('LettersStuck')
    const exported = await exportedSeries()
    for (const rule of all) {
      expect(rule.expr, rule.alert).toEqual(expect.any(String))
      expect(rule.labels?.severity, rule.alert).toMatch(/^(page|ticket)$/)
      expect(rule.annotations?.summary, rule.alert).toEqual(expect.any(String))
      // Our series all start with letters_ or http_ (plus Prometheus's own `up`); label values are quoted.
      const series = [...rule.expr.replace(/"[^"]*"/g, '""').matchAll(/\b(letters_[a-z0-9_]+|http_[a-z0-9_]+|up)\b/g)].map((match) => match[1]!)
      expect(series.length, `${rule.alert}: ${rule.expr}`).toBeGreaterThan(0)
      for (const name of series) expect(exported, `${rule.alert} reads ${name}, which nothing exports`).toContain(name)
    }
  })

  it('page for stuck live letters only: stuck test letters are a ticket', async () => {
    const rules = parse(await readFile(infra('alerts.yml'), 'utf8')) as { groups: Array<{ name: string; rules: Rule[] }> }
    const stuck = rules.groups.flatMap((group) => group.rules).filter((rule) => rule.expr.includes('letters_stuck'))
    expect(stuck.map((rule) => [rule.alert, rule.labels?.severity, /letters_stuck\{mode="(live|test)"\}/.exec(rule.expr)?.[1]])).toEqual([
      ['LettersStuck', 'page', 'live'],
      ['TestLettersStuck', 'ticket', 'test'],
    ])
  })

  it('scrape every process kind, the gateway with the admin token', async () => {
    const config = parse(await readFile(infra('prometheus.yml'), 'utf8')) as {
      rule_files: string[]
      scrape_configs: Array<{ job_name: string; authorization?: { type: string } }>
    }
    expect(config.rule_files).toEqual(['alerts.yml'])
    expect(config.scrape_configs.map((job) => job.job_name).sort()).toEqual([
      'letters-address-worker',
      'letters-gateway',
      'letters-production-worker',
      'letters-webhook-worker',
    ])
    expect(config.scrape_configs.find((job) => job.job_name === 'letters-gateway')?.authorization?.type).toBe('Bearer')
  })
})
