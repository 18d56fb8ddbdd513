import { useMemo, useRef, useState, type ChangeEvent } from 'react'
import { Link } from 'react-router'
import { useBulkDryRun, useBulkSend, useCampaigns, type BulkResult, type Campaign } from '../api'
import { LettersApiError } from '../client'
import { Field, FilePicker } from '../components/Field'
import { Page } from '../components/Page'
import { ErrorBox, Loading, Notice } from '../components/Status'
import { countryCode } from '../countries'
import { CsvProblem, normalizeHeader, parseCsv, toCsv, type CsvTable } from '../csv'
import { formatCount, formatCredits } from '../format'
import { newIdempotencyKey, nothingCreated } from '../keys'

/** The recipient's columns as the API names them (bulk-csv.ts: BulkRecipient's fields but `variables`), in Spanish. */
const recipientColumns = {
  name: 'Nombre',
  surname: 'Apellidos',
  company: 'Empresa',
  address: 'Dirección',
  zip: 'Código postal',
  city: 'Ciudad',
  province: 'Provincia',
  country: 'País',
  inkColor: 'Tinta',
} as const
type RecipientColumn = keyof typeof recipientColumns
const requiredColumns: RecipientColumn[] = ['name', 'surname', 'address', 'zip', 'city', 'country']

/** The names a spreadsheet may give each column (compared without case or accents). */
const aliases: Record<RecipientColumn, string[]> = {
  name: ['name', 'nombre', 'first name', 'firstname'],
  surname: ['surname', 'apellidos', 'apellido', 'last name', 'lastname'],
  company: ['company', 'empresa', 'compania', 'razon social'],
  address: ['address', 'direccion', 'domicilio', 'calle'],
  zip: ['zip', 'codigo postal', 'cp', 'c p', 'postal code', 'zip code'],
  city: ['city', 'ciudad', 'localidad', 'poblacion', 'municipio'],
  province: ['province', 'provincia'],
  country: ['country', 'pais'],
  inkColor: ['inkcolor', 'ink color', 'tinta', 'color de tinta'],
}
const byAlias = new Map(Object.entries(aliases).flatMap(([column, names]) => names.map((name) => [name, column as RecipientColumn])))

const MAX_ROWS = 1000
const IGNORE = ''
/** A select's value: a recipient column, or `var:<name>` for a campaign variable, or IGNORE. */
type Target = string

interface Mapping {
  /** What each column of the file becomes: the API's column names it is sent under (none: left out). */
  outputs: string[][]
  /** Which columns were matched by their name (no select for them). */
  automatic: boolean[]
}

/** Recognised headers are matched; a header named as a variable also fills it (a "nombre" column may be both). */
function automaticMapping(header: string[], campaign: Campaign | undefined, chosen: Record<number, Target>): Mapping {
  const variables = new Map((campaign?.variables ?? []).map((variable) => [normalizeHeader(variable.name), variable.name]))
  const outputs: string[][] = []
  const automatic: boolean[] = []
  header.forEach((name, index) => {
    const normalized = normalizeHeader(name)
    const column = byAlias.get(normalized)
    const variable = variables.get(normalized) ?? (variables.has(normalized.replace(/ /g, '_')) ? variables.get(normalized.replace(/ /g, '_')) : undefined)
    if (column || variable) {
      outputs.push([...(column ? [column] : []), ...(variable ? [variable] : [])])
      automatic.push(true)
      return
    }
    const target = chosen[index] ?? IGNORE
    outputs.push(target === IGNORE ? [] : [target.startsWith('var:') ? target.slice(4) : target])
    automatic.push(false)
  })
  return { outputs, automatic }
}

/** What is wrong with a mapping before the API is asked: missing columns, a column used twice. */
function mappingProblems(mapping: Mapping, campaign: Campaign | undefined): string[] {
  const used = mapping.outputs.flat()
  const problems: string[] = []
  const missing = requiredColumns.filter((column) => !used.includes(column))
  if (missing.length > 0) problems.push(`Falta una columna para: ${missing.map((column) => recipientColumns[column]).join(', ')}.`)
  for (const variable of campaign?.variables ?? []) {
    if (variable.defaultValue === null && !used.includes(variable.name)) problems.push(`Falta una columna para la variable «${variable.name}» de la campaña.`)
  }
  const twice = [...new Set(used.filter((name, index) => used.indexOf(name) !== index))]
  for (const name of twice)
    problems.push(`Hay dos columnas que se usan como ${recipientColumns[name as RecipientColumn] ?? `la variable «${name}»`}: elige solo una.`)
  return problems
}

/** The file re-headed as the API names its columns, with only the rows asked for. */
function apiCsv(table: CsvTable, mapping: Mapping, rowIndexes: number[]): string {
  const header: string[] = []
  const sources: { column: number; name: string }[] = []
  mapping.outputs.forEach((names, column) =>
    names.forEach((name) => {
      header.push(name)
      sources.push({ column, name })
    }),
  )
  const rows = rowIndexes.map((index) =>
    sources.map(({ column, name }) => {
      const cell = (table.rows[index]?.cells[column] ?? '').trim()
      return name === 'country' ? countryCode(cell) : cell
    }),
  )
  return toCsv(header, rows)
}

const utf8 = new TextDecoder('utf-8', { fatal: true })

interface Review {
  result: BulkResult
  valid: number[]
  errorsByRow: Map<number, string[]>
}

export default function BulkPage() {
  const campaigns = useCampaigns()
  const dryRun = useBulkDryRun()
  const send = useBulkSend()
  const [campaignId, setCampaignId] = useState('')
  const [file, setFile] = useState<{ name: string; table: CsvTable }>()
  const [fileError, setFileError] = useState<string>()
  const [fileName, setFileName] = useState<string>()
  const [chosen, setChosen] = useState<Record<number, Target>>({})
  const [review, setReview] = useState<Review>()
  const [sent, setSent] = useState<{ result: BulkResult; rows: number[] }>()
  const idempotencyKey = useRef<string | undefined>(undefined)
  // Set at once on a click: a double click's second event comes before the disabled button is drawn.
  const sending = useRef(false)

  const campaign = campaigns.data?.find((item) => item.id === campaignId) ?? campaigns.data?.[0]
  const mapping = useMemo(() => (file ? automaticMapping(file.table.header, campaign, chosen) : undefined), [file, campaign, chosen])
  const problems = mapping ? mappingProblems(mapping, campaign) : []
  const tooMany = file !== undefined && file.table.rows.length > MAX_ROWS

  /** Anything changed after a review makes it stale: it must be checked again before sending. */
  const changed = () => {
    setReview(undefined)
    setSent(undefined)
    dryRun.reset()
    send.reset()
    idempotencyKey.current = undefined
  }

  const chooseFile = async (event: ChangeEvent<HTMLInputElement>) => {
    changed()
    setChosen({})
    setFile(undefined)
    setFileError(undefined)
    const chosenFile = event.target.files?.[0]
    setFileName(chosenFile?.name)
    if (!chosenFile) return
    try {
      const text = utf8.decode(await chosenFile.arrayBuffer())
      setFile({ name: chosenFile.name, table: parseCsv(text) })
    } catch (error) {
      setFileError(
        error instanceof CsvProblem
          ? error.message
          : 'El archivo no está en UTF-8. En Excel, guárdalo con «Guardar como» y el tipo «CSV UTF-8 (delimitado por comas)».',
      )
    }
  }

  const check = () => {
    if (!file || !mapping || !campaign) return
    const all = file.table.rows.map((_row, index) => index)
    dryRun.mutate(
      { campaignId: campaign.id, csv: apiCsv(file.table, mapping, all) },
      {
        onSuccess: (result) => {
          const errorsByRow = new Map<number, string[]>()
          for (const error of result.errors) errorsByRow.set(error.index, [...(errorsByRow.get(error.index) ?? []), error.message])
          setReview({ result, errorsByRow, valid: all.filter((index) => !errorsByRow.has(index)) })
          idempotencyKey.current = newIdempotencyKey()
        },
      },
    )
  }

  const sendValid = () => {
    if (!file || !mapping || !campaign || !review || sending.current) return
    const key = (idempotencyKey.current ??= newIdempotencyKey())
    sending.current = true
    send.mutate(
      { campaignId: campaign.id, csv: apiCsv(file.table, mapping, review.valid), idempotencyKey: key },
      {
        onSettled: () => {
          sending.current = false
        },
        onSuccess: (result) => {
          idempotencyKey.current = undefined
          setSent({ result, rows: review.valid })
          setReview(undefined)
        },
        onError: (error) => {
          if (error instanceof LettersApiError && nothingCreated(error.status)) idempotencyKey.current = undefined
        },
      },
    )
  }

  if (campaigns.isPending)
    return (
      <Page title="Envío masivo">
        <Loading />
      </Page>
    )
  if (campaigns.error)
    return (
      <Page title="Envío masivo">
        <ErrorBox error={campaigns.error} />
      </Page>
    )
  if (!campaign)
    return (
      <Page title="Envío masivo">
        <p>No tienes ninguna campaña activa. Los envíos masivos se hacen con una campaña: pide a nuestro equipo que te prepare una.</p>
      </Page>
    )

  const templateHeader = [...Object.keys(recipientColumns).filter((column) => column !== 'inkColor'), ...campaign.variables.map((variable) => variable.name)]
  const validCount = review?.valid.length ?? 0

  return (
    <Page title="Envío masivo" lead="Envía una carta de una campaña a cada fila de una hoja de cálculo guardada como CSV.">
      <section className="stack">
        <h2 id="bulk-file">1. Campaña y archivo</h2>
        <Field label="Campaña">
          {(props) => (
            <select
              {...props}
              value={campaign.id}
              onChange={(event) => {
                changed()
                // A column chosen as one of the old campaign's variables means nothing to the new one.
                setChosen({})
                setCampaignId(event.target.value)
              }}
            >
              {campaigns.data.map((item) => (
                <option key={item.id} value={item.id}>
                  {item.name}
                </option>
              ))}
            </select>
          )}
        </Field>
        {campaign.variables.length > 0 && (
          <p className="hint">
            Esta campaña usa {campaign.variables.length === 1 ? 'la variable' : 'las variables'}{' '}
            {campaign.variables.map((variable, index) => (
              <span key={variable.name}>
                {index > 0 && ', '}
                <span className="mono">{variable.name}</span>
                {variable.defaultValue !== null ? ` (si falta: «${variable.defaultValue}»)` : ' (obligatoria)'}
              </span>
            ))}
            .
          </p>
        )}
        <FilePicker
          label="Archivo CSV"
          button="Elegir archivo CSV"
          hint="Separado por comas o por punto y coma, guardado en UTF-8, con una fila de cabecera y hasta 1000 filas."
          accept=".csv,text/csv"
          fileName={fileName}
          error={fileError}
          onChange={(event) => void chooseFile(event)}
        />
        <p>
          <a href={`data:text/csv;charset=utf-8,${encodeURIComponent(toCsv(templateHeader, []))}`} download={`plantilla-${campaign.name}.csv`}>
            Descargar una plantilla para esta campaña
          </a>
        </p>
      </section>

      {file && mapping && (
        <section className="stack">
          <h2 id="bulk-columns">2. Columnas</h2>
          <p>El archivo tiene {formatCount(file.table.rows.length, 'fila', 'filas')} con datos.</p>
          {tooMany && (
            <div role="alert" className="notice notice-error">
              <p>El archivo tiene más de {MAX_ROWS} filas: divídelo en varios archivos.</p>
            </div>
          )}
          <ul className="column-map">
            {file.table.header.map((name, index) =>
              mapping.automatic[index] ? (
                <li key={index}>
                  <span className="column-name">{name || `Columna ${index + 1}`}</span>
                  <span aria-hidden="true"> → </span>
                  <span className="visually-hidden"> se usa como </span>
                  {(mapping.outputs[index] ?? []).map((output) => recipientColumns[output as RecipientColumn] ?? `variable «${output}»`).join(' y ')}
                </li>
              ) : (
                <li key={index}>
                  <Field label={name || `Columna ${index + 1}`} hint="No se reconoce esta columna: elige para qué sirve.">
                    {(props) => (
                      <select
                        {...props}
                        value={chosen[index] ?? IGNORE}
                        onChange={(event) => {
                          changed()
                          setChosen((current) => ({ ...current, [index]: event.target.value }))
                        }}
                      >
                        <option value={IGNORE}>No usar esta columna</option>
                        <optgroup label="Datos del destinatario">
                          {Object.entries(recipientColumns).map(([column, label]) => (
                            <option key={column} value={column}>
                              {label}
                            </option>
                          ))}
                        </optgroup>
                        {campaign.variables.length > 0 && (
                          <optgroup label="Variables de la campaña">
                            {campaign.variables.map((variable) => (
                              <option key={variable.name} value={`var:${variable.name}`}>
                                {variable.name}
                              </option>
                            ))}
                          </optgroup>
                        )}
                      </select>
                    )}
                  </Field>
                </li>
              ),
            )}
          </ul>
          {problems.length > 0 && (
            <div className="notice notice-warning">
              <ul>
                {problems.map((problem) => (
                  <li key={problem}>{problem}</li>
                ))}
              </ul>
            </div>
          )}
          <div className="actions">
            <button type="button" onClick={check} disabled={problems.length > 0 || tooMany || dryRun.isPending || file.table.rows.length === 0}>
              Revisar
            </button>
            {dryRun.isPending && <span role="status">Revisando las filas…</span>}
          </div>
          <ErrorBox error={dryRun.error} />
        </section>
      )}

      {review && file && (
        <section className="stack">
          <h2 id="bulk-review">3. Revisión</h2>
          <div role="status">
            <dl className="summary">
              <div>
                <dt>Cartas válidas</dt>
                <dd>{review.result.created}</dd>
              </div>
              <div>
                <dt>Filas con errores</dt>
                <dd>{review.errorsByRow.size}</dd>
              </div>
              <div>
                <dt>Total</dt>
                <dd>{review.result.cost !== undefined ? formatCredits(review.result.cost) : '—'}</dd>
              </div>
            </dl>
            <p>
              <strong>Nada se ha cobrado todavía.</strong>{' '}
              {review.errorsByRow.size > 0 && 'Las filas con errores no se enviarán: corrígelas en el archivo y vuelve a cargarlo si las necesitas.'}
            </p>
          </div>
          <div className="table-scroll" role="region" aria-label="Filas revisadas" tabIndex={0}>
            <table>
              <caption className="visually-hidden">Filas revisadas</caption>
              <thead>
                <tr>
                  <th scope="col">Fila</th>
                  <th scope="col">Destinatario</th>
                  <th scope="col">Ciudad</th>
                  <th scope="col">Resultado</th>
                </tr>
              </thead>
              <tbody>
                {file.table.rows.map((row, index) => {
                  const errors = review.errorsByRow.get(index)
                  const cell = (column: RecipientColumn) => {
                    const at = mapping?.outputs.findIndex((outputs) => outputs.includes(column)) ?? -1
                    return at >= 0 ? (row.cells[at] ?? '') : ''
                  }
                  return (
                    <tr key={index} className={errors ? 'row-error' : undefined}>
                      <td data-label="Fila">{row.line}</td>
                      <td data-label="Destinatario">{`${cell('name')} ${cell('surname')}`.trim() || '—'}</td>
                      <td data-label="Ciudad">{cell('city') || '—'}</td>
                      <td data-label="Resultado">
                        {errors ? (
                          <ul className="row-errors">
                            {errors.map((message) => (
                              <li key={message}>{message}</li>
                            ))}
                          </ul>
                        ) : (
                          'Correcta'
                        )}
                      </td>
                    </tr>
                  )
                })}
              </tbody>
            </table>
          </div>
          <div className="actions">
            <button type="button" onClick={sendValid} disabled={validCount === 0 || send.isPending}>
              {validCount === 1 ? 'Enviar 1 carta' : `Enviar ${validCount} cartas`}
            </button>
            {send.isPending && <span role="status">Enviando…</span>}
          </div>
          <ErrorBox error={send.error} />
        </section>
      )}

      {sent && (
        <section className="stack">
          <h2 id="bulk-sent">Enviado</h2>
          <div role="status">
            <Notice kind="success">
              <p>
                Se han creado {formatCount(sent.result.created, 'carta', 'cartas')}
                {sent.result.cost !== undefined ? ` por ${formatCredits(sent.result.cost)}` : ''}.
              </p>
            </Notice>
          </div>
          {sent.result.errors.length > 0 && (
            <Notice kind="warning">
              <p>{formatCount(sent.result.errors.length, 'fila no se ha enviado', 'filas no se han enviado')}:</p>
              <ul>
                {sent.result.errors.map((error) => {
                  // The API counts the rows it was sent (only the valid ones): back to the file's rows.
                  const line = file?.table.rows[sent.rows[error.index] ?? -1]?.line
                  return <li key={error.index}>{line ? `Fila ${line}: ${error.message}` : error.message}</li>
                })}
              </ul>
            </Notice>
          )}
          <p>
            <Link to={`/cartas?campana=${campaign.id}`}>Ver las cartas de esta campaña</Link>
          </p>
        </section>
      )}
    </Page>
  )
}
