import { readFile, stat } from 'node:fs/promises'
import { extname } from 'node:path'
import { type Command, InvalidArgumentError } from 'commander'
import { ARTWORK_MAX_BYTES, returnReasonLabels, type ArtworkContentType, type ArtworkMeta, type Mode, type ReturnReason } from '@letters/contracts'
import { DEFAULT_LETTERS_URL, type CliEnvironment } from '@letters/config'
import { AdminApi, CliError, type ApiAnswer } from '../admin-api.js'
import { fileSize, num, type Cell, type Io } from '../output.js'

/** What a group's commands (`addCommands` of each module of this folder) are added with: the CLI's settings and where it prints. */
export interface GroupContext {
  settings: CliEnvironment
  io: Io
}

/**
 * The API client, once a command needs it: `--help` works without a token. LETTERS_URL, when set,
 * is an http(s) URL already (its declaration refused any other as the settings were read).
 */
function connect(settings: CliEnvironment): AdminApi {
  if (!settings.adminToken) {
    throw new CliError('Falta ADMIN_TOKEN: exporta el token de administración del gateway (ADMIN_TOKEN=… npm run admin -- <orden>)')
  }
  return new AdminApi({ baseUrl: new URL(settings.lettersUrl ?? DEFAULT_LETTERS_URL), token: settings.adminToken })
}

/**
 * A command that calls the API, with `--json`: `call` gets the client, then the command's
 * arguments and its options as Commander parsed them; `render` makes the table of the answer.
 * It prints a table for people, or with `--json` the API's JSON exactly as it came; an error
 * prints the API's Spanish message (or the CLI's own) on stderr, and main.ts turns it into the
 * exit code.
 */
export function apiCommand<Body>(
  { settings, io }: GroupContext,
  command: Command,
  call: (api: AdminApi, ...args: never[]) => Promise<ApiAnswer<Body>>,
  render: (body: Body) => string,
): Command {
  return command.option('--json', "print the admin API's JSON as it is, for scripts").action(async (...received: unknown[]) => {
    // Commander passes the arguments, then the options, then the command itself.
    const args = received.slice(0, -1)
    const options = args.at(-1) as { json?: boolean }
    const answer = await call(connect(settings), ...(args as never[]))
    if (!options.json) io.out(render(answer.body))
    else if (answer.text !== '') io.out(answer.text)
  })
}

/**
 * An integer argument; its range is the API's to judge, so the rule lives in one place. One past
 * what a number holds exactly would reach the API as "1e+23" and be refused as no integer at all.
 */
export const integer = (what: string) => (value: string) => {
  if (!/^-?\d+$/.test(value)) throw new InvalidArgumentError(`${what} debe ser un número entero.`)
  const number = Number(value)
  if (!Number.isSafeInteger(number)) throw new InvalidArgumentError(`${what} es demasiado grande: ${value}.`)
  return number
}

/** A return reason with its name as the floor reads it: "bad_address (Dirección incorrecta o incompleta)". */
export const reasonWithLabel = (reason: ReturnReason) => `${reason} (${returnReasonLabels[reason]})`

/** The options of a list read a page at a time, as Commander parses them. */
export interface PagingOptions {
  limit?: number
  cursor?: string
}

/**
 * Adds `--limit` and `--cursor`, the options of every list the API gives a page at a time, to
 * `command`; `items` names what a page holds ("letters"). Its answer's table ends with `nextPage`.
 */
export function withPagingOptions(command: Command, items: string): Command {
  return command
    .option('--limit <n>', `${items} per page (1-100, default 20)`, integer('--limit'))
    .option('--cursor <cursor>', 'the next page, as the previous one said')
}

/** The page asked for with `withPagingOptions`' options, set on `query` as the API's `limit` and `cursor`. */
export function readPaging(options: PagingOptions, query: URLSearchParams): void {
  if (options.limit !== undefined) query.set('limit', String(options.limit))
  if (options.cursor !== undefined) query.set('cursor', options.cursor)
}

/** The hint under a list that has another page. */
export const nextPage = (nextCursor: string | null) => (nextCursor ? `\nHay más: repite la orden con --cursor ${nextCursor}` : '')

/** The query of a list that is filtered by nothing but its mode, if at all: `?mode=…&limit=…&cursor=…`. */
export const pageQuery = (options: PagingOptions & { mode?: Mode }) => {
  const query = new URLSearchParams()
  if (options.mode !== undefined) query.set('mode', options.mode)
  readPaging(options, query)
  return query.size > 0 ? `?${query}` : ''
}

/** Why a file given on the command line cannot be read, as the operator reads it; `what` names what it should have been. */
export function unreadable(error: unknown, path: string, what: string): CliError {
  const code = (error as NodeJS.ErrnoException).code
  if (code === 'ENOENT') return new CliError(`No existe el fichero '${path}'`)
  if (code === 'EISDIR') return new CliError(`'${path}' es una carpeta, no ${what}`)
  if (code === 'EACCES') return new CliError(`No hay permiso para leer el fichero '${path}'`)
  return new CliError(`No se puede leer el fichero '${path}': ${(error as Error).message}`)
}

/** A mistake in the command line that Commander cannot see (options that do not go together): exit 2, as Commander's usage errors. */
export const usageError = (message: string) => new CliError(message, 2)

/** "a", "a y b", "a, b y c": a list in a Spanish sentence. */
export function spanishList(items: string[], conjunction = 'y'): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} ${conjunction} ${items.at(-1)}`
}

/**
 * A file as the API takes it: its bytes and the Content-Type its extension says (`types`, of which
 * `accepted`). A file of another type, or larger than `maxBytes`, is refused here, before its
 * bytes travel.
 */
export async function readUpload<T extends string>(
  path: string,
  types: Record<string, T>,
  accepted: readonly T[],
  maxBytes: number,
  rule: string,
): Promise<{ data: Buffer; contentType: T }> {
  const contentType = types[extname(path).toLowerCase()]
  if (!contentType || !accepted.includes(contentType)) {
    const extensions = Object.keys(types).filter((extension) => accepted.includes(types[extension]!))
    throw new CliError(`El fichero '${path}' no es ${spanishList(extensions, 'ni')}: ${rule} (el tipo se deduce de la extensión)`)
  }
  try {
    const { size } = await stat(path)
    if (size > maxBytes) {
      // Rounded up, so a file just over the limit never reads as the limit itself.
      const megabytes = Math.ceil((size / 1024 / 1024) * 10) / 10
      throw new CliError(`El fichero '${path}' ocupa ${num(megabytes, 1)} MB: el máximo es ${num(maxBytes / 1024 / 1024)} MB`)
    }
    return { data: await readFile(path), contentType }
  } catch (error) {
    if (error instanceof CliError) throw error
    throw unreadable(error, path, 'un fichero')
  }
}

/** The file types an artwork is uploaded as, by extension: the API takes the file with this Content-Type. */
const artworkExtensions: Record<string, ArtworkContentType> = { '.svg': 'image/svg+xml', '.pdf': 'application/pdf', '.png': 'image/png' }

/** A design's artwork or a signature's drawing, of the types `accepted`. */
export const readArtwork = (path: string, accepted: readonly ArtworkContentType[], rule: string) =>
  readUpload(path, artworkExtensions, accepted, ARTWORK_MAX_BYTES, rule)

/** An artwork's rows: its version, type and weight, and its sha256 to compare with the file sent; blank when none was uploaded. */
export function artworkRows(artwork: ArtworkMeta | null): Array<[string, Cell]> {
  if (!artwork) return [['artwork', null]]
  return [
    ['artwork', `v${artwork.version} ${artwork.contentType} ${fileSize(artwork.bytes)}`],
    ['sha256', artwork.sha256],
  ]
}
