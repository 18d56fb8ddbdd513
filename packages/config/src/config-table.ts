import { declaredVariables } from './variables.js'

/** The marks around the table in docs/operations.md: what lies between them is written from the declarations. */
export const CONFIG_TABLE_START = '<!-- config-table:start: written by npm run docs:config from packages/config/src/variables.ts -->'
export const CONFIG_TABLE_END = '<!-- config-table:end -->'

/** docs/operations.md's configuration table: one row per variable, the services' then the CLI's, in the declarations' order. */
export function configTable(): string {
  const rows = [...declaredVariables()].map((variable) => {
    for (const cell of [variable.shownDefault, variable.describe]) {
      // A bar would end the cell, a line break the row.
      if (/[|\n]/.test(cell)) throw new Error(`${variable.env}: its documentation may hold neither "|" nor a line break`)
    }
    return `| \`${variable.env}\` | ${variable.shownDefault} | ${variable.describe} |`
  })
  return ['| Variable | Default | Meaning |', '|---|---|---|', ...rows].join('\n')
}

/** `markdown` with the table between its marks written anew; the rest is left as it is. */
export function withConfigTable(markdown: string): string {
  const start = markdown.indexOf(CONFIG_TABLE_START)
  const end = markdown.indexOf(CONFIG_TABLE_END)
  if (start < 0 || end < start) throw new Error(`the configuration table's marks are missing: ${CONFIG_TABLE_START} … ${CONFIG_TABLE_END}`)
  return `${markdown.slice(0, start + CONFIG_TABLE_START.length)}\n${configTable()}\n${markdown.slice(end)}`
}
