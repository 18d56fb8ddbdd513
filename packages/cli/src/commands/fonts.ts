import type { Command } from 'commander'
import { DEFAULT_FONT, FONT_MAX_BYTES, fontContentTypes, fontNames, type AccountFont, type FontContentType } from '@letters/contracts'
import { segment } from '../admin-api.js'
import { fileSize, listTable, recordTable, type Cell } from '../output.js'
import { apiCommand, readUpload, type GroupContext } from './shared.js'

/** The file types an account's font is uploaded as, by extension. */
const fontExtensions: Record<string, FontContentType> = { '.ttf': 'font/ttf', '.otf': 'font/otf', '.woff': 'font/woff', '.woff2': 'font/woff2' }

function renderFont(font: AccountFont): string {
  const file: Array<[string, Cell]> = font.file
    ? [
        ['file', `v${font.file.version} ${font.file.contentType} ${fileSize(font.file.bytes)}`],
        ['sha256', font.file.sha256],
      ]
    : [['file', null]]
  return recordTable([['name', font.name], ['family', font.family], ['plotterFont', font.plotterFont], ...file])
}

/** The commands of `fonts`. */
export function addCommands(fonts: Command, context: GroupContext): void {
  apiCommand(
    context,
    fonts
      .command('add')
      .description('add a font to an account, without a file yet (letters can use it once it has one)')
      .argument('<account>', 'account id')
      .requiredOption('--name <name>', 'the value requests send as fontName: 2 to 40 lower-case letters, digits or hyphens')
      .requiredOption('--family <family>', 'the name people read')
      .option('--plotter-font <hand>', `the built-in hand the plotter writes it in (${fontNames.join(', ')}; default ${DEFAULT_FONT})`),
    (api, account: string, options: { name: string; family: string; plotterFont?: string; json?: boolean }) =>
      api.post<AccountFont>(`/admin/accounts/${segment(account)}/fonts`, { name: options.name, family: options.family, plotterFont: options.plotterFont }),
    renderFont,
  )
  apiCommand(
    context,
    fonts
      .command('file')
      .summary("upload a font's file")
      .description("upload a font's file, a new version each time: a .ttf, .otf, .woff or .woff2 that writes Spanish (ñ, á, ¿, ¡…)")
      .argument('<account>', 'account id')
      .argument('<name>', "the font's name")
      .argument('<file>', 'the font file, sent as it is (its type is taken from the extension)'),
    async (api, account: string, name: string, file: string) => {
      const font = await readUpload(file, fontExtensions, fontContentTypes, FONT_MAX_BYTES, 'una fuente se sube como TTF, OTF, WOFF o WOFF2')
      return api.upload<AccountFont>(`/admin/accounts/${segment(account)}/fonts/${segment(name)}/file`, font.data, font.contentType)
    },
    renderFont,
  ).addHelpText('after', '\nExample:\n  npm run admin -- fonts file <account> mi-letra MiLetra.woff2')
  apiCommand(
    context,
    fonts.command('list').description("an account's fonts, with or without a file").argument('<account>', 'account id'),
    (api, account: string) => api.get<{ data: AccountFont[] }>(`/admin/accounts/${segment(account)}/fonts`),
    (list) =>
      listTable(
        ['name', 'family', 'plotterFont', 'file'],
        list.data.map((font) => [
          font.name,
          font.family,
          font.plotterFont,
          font.file && `v${font.file.version} ${font.file.contentType} ${fileSize(font.file.bytes)}`,
        ]),
      ),
  )
}
