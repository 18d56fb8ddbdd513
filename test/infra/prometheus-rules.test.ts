import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { exportedSeries, seriesAndLabelsOf } from '../support/exported-series.js'

const infra = (name: string) => fileURLToPath(new URL(`../../infra/prometheus/${name}`, import.meta.url))

interface Rule {
  alert: string
  expr: string
  for?: string
  labels?: Record<string, string>
  annotations?: Record<string, string>
}

describe('the example Prometheus alert rules', () => {
  it('parse, and every alert names only series the service exports', async () => {
    const rules = parse(await readFile(infra('alerts.yml'), 'utf8')) as { groups: Array<{ name: string; rules: Rule[] }> }
    const all = rules.groups.flatMap((group) => group.rules)
    expect(all.map((rule) => rule.alert)).toContain('LettersStuck')
    const exported = exportedSeries()
    for (const rule of all) {
      expect(rule.expr, rule.alert).toEqual(expect.any(String))
      expect(rule.labels?.severity, rule.alert).toMatch(/^(page|ticket)$/)
      expect(rule.annotations?.summary, rule.alert).toEqual(expect.any(String))
      const { series, labels } = seriesAndLabelsOf(rule.expr)
      expect(series.length, `${rule.alert}: ${rule.expr}`).toBeGreaterThan(0)
      for (const name of series) expect(exported.has(name), `${rule.alert} reads ${name}, which nothing exports`).toBe(true)
      const carried = new Set(series.flatMap((name) => [...exported.get(name)!]))
      for (const label of labels) expect(carried.has(label), `${rule.alert} names the label ${label}, which ${series.join(', ')} do not carry`).toBe(true)
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

  it('scrape every process kind, each with the read-only metrics token, not the admin token', async () => {
    const config = parse(await readFile(infra('prometheus.yml'), 'utf8')) as {
      rule_files: string[]
      scrape_configs: Array<{ job_name: string; authorization?: { type: string; credentials_file?: string } }>
    }
    for (const job of config.scrape_configs) {
      expect(job.authorization, job.job_name).toEqual({ type: 'Bearer', credentials_file: '/etc/prometheus/letters-metrics-token' })
    }
    expect(config.rule_files).toEqual(['alerts.yml'])
    expect(config.scrape_configs.map((job) => job.job_name).sort()).toEqual([
      'letters-address-worker',
      'letters-gateway',
      'letters-production-worker',
      'letters-webhook-worker',
    ])
  })
})
