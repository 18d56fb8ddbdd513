import { type Command, InvalidArgumentError, Option } from 'commander'
import {
  BLEED_MM,
  DEFAULT_CARD_FORMAT,
  DEFAULT_ENVELOPE_FORMAT,
  artworkContentTypes,
  cardFormatNames,
  cardFormats,
  cardProductions,
  envelopeFormatNames,
  qrCorners,
  type CardDesign,
  type EnvelopeDesign,
  type QrPlacement,
} from '@letters/contracts'
import { segment } from '../admin-api.js'
import { millimetres, recordTable, type Cell } from '../output.js'
import { apiCommand, artworkRows, readArtwork, usageError, type GroupContext } from './shared.js'

const designKinds = ['card', 'envelope'] as const
type DesignKind = (typeof designKinds)[number]
const designRoutes: Record<DesignKind, string> = { card: 'card-designs', envelope: 'envelope-designs' }

/** `designs add` and `designs update` as Commander parses them; `false` is a `--no-…` option: clear the field. */
interface DesignOptions {
  kind: DesignKind
  name?: string
  format?: string
  production?: string
  stockCode?: string | false
  paperColor?: string | false
  qr?: QrPlacement | false
  json?: boolean
}

/** `--qr corner:mm` as the API takes it, `{ corner, sizeMm }`; the API judges the corner and the size. */
function qrPlacementOption(value: string): QrPlacement {
  const match = /^([a-z-]+):(\d+(?:\.\d+)?)$/.exec(value.trim())
  if (!match)
    throw new InvalidArgumentError(`Escribe el sitio del código QR como rincón:milímetros, por ejemplo bottom-right:20 (rincones: ${qrCorners.join(', ')})`)
  return { corner: match[1] as QrPlacement['corner'], sizeMm: Number(match[2]) }
}

/** `#RRGGBB` as given, or the six digits alone with their `#` put back; the API judges the colour. */
const hexColor = (value: string) => (/^[0-9A-Fa-f]{6}$/.test(value) ? `#${value}` : value)

/**
 * The body of a design's POST or PATCH: the options given, and no others (a PATCH leaves the rest
 * as they are). Each kind has fields of its own; the other kind's option is refused here rather
 * than sent for the API to call an unknown field.
 */
function designBody(options: DesignOptions): Record<string, unknown> {
  if (options.kind === 'envelope' && options.production !== undefined)
    throw usageError('La opción --production solo vale para diseños de tarjeta (--kind card)')
  if (options.kind === 'card' && options.paperColor !== undefined) throw usageError('La opción --paper-color solo vale para diseños de sobre (--kind envelope)')
  if (options.kind === 'envelope' && options.qr !== undefined) throw usageError('La opción --qr solo vale para diseños de tarjeta (--kind card)')
  const body: Record<string, unknown> = {}
  if (options.name !== undefined) body.name = options.name
  if (options.format !== undefined) body.format = options.format
  if (options.production !== undefined) body.production = options.production
  if (options.stockCode !== undefined) body.stockCode = options.stockCode === false ? null : options.stockCode
  if (options.paperColor !== undefined) body.paperColor = options.paperColor === false ? null : options.paperColor
  if (options.qr !== undefined) body.qrPlacement = options.qr === false ? null : options.qr
  return body
}

function renderDesign(design: CardDesign | EnvelopeDesign): string {
  const rows: Array<[string, Cell]> = [
    ['id', design.id],
    ['name', design.name],
    ['format', design.format],
    ['size', millimetres(design.size)],
  ]
  if ('production' in design) rows.push(['production', design.production])
  if ('qrPlacement' in design) rows.push(['qrPlacement', design.qrPlacement && `${design.qrPlacement.corner}, ${design.qrPlacement.sizeMm} mm`])
  rows.push(['stockCode', design.stockCode])
  if ('paperColor' in design) rows.push(['paperColor', design.paperColor])
  return recordTable([...rows, ...artworkRows(design.artwork)])
}

/** The commands of `designs`. */
export function addCommands(designs: Command, context: GroupContext): void {
  const kindOption = () => new Option('--kind <kind>', 'card or envelope').choices(designKinds).makeOptionMandatory()
  /** The product's options, for `add` and `update` alike; each kind takes its own (designBody refuses the other's). */
  const productOptions = (command: Command) =>
    command
      .option(
        '--format <format>',
        `the size: a card ${cardFormatNames.join(', ')} (default ${DEFAULT_CARD_FORMAT}); an envelope ${envelopeFormatNames.join(', ')} (default ${DEFAULT_ENVELOPE_FORMAT})`,
      )
      .addOption(
        new Option(
          '--production <production>',
          "a card's: printed, the floor prints its artwork on blank stock (default); preprinted, it loads stock that already carries it (needs --stock-code; its artwork, if any, pictures that front in proofs only)",
        ).choices(cardProductions),
      )
      .option('--stock-code <code>', 'the code of the stock the floor loads for it, e.g. CLASICA-A6')
      .option(
        '--paper-color <color>',
        `an envelope's paper colour, shown in proofs: #RRGGBB, or the six digits alone (the shell takes an unquoted # for a comment)`,
        hexColor,
      )
      .option(
        '--qr <corner:mm>',
        `a card's place for the QR code of letters sent with a trackingUrl: a corner (${qrCorners.join(', ')}) and its side, 15 to 40 mm, e.g. bottom-right:20 (default: bottom-right, 18 mm)`,
        qrPlacementOption,
      )

  apiCommand(
    context,
    productOptions(
      designs
        .command('add')
        .description('add a card or envelope design to an account')
        .argument('<account>', 'account id')
        .addOption(kindOption())
        .requiredOption('--name <name>', "the design's name"),
    ),
    (api, account: string, options: DesignOptions) =>
      api.post<CardDesign | EnvelopeDesign>(`/admin/accounts/${segment(account)}/${designRoutes[options.kind]}`, designBody(options)),
    renderDesign,
  ).addHelpText(
    'after',
    '\nExamples:\n' +
      '  npm run admin -- designs add <account> --kind card --name "Tarjeta floral" --format A5\n' +
      '  npm run admin -- designs add <account> --kind card --name "Tarjeta clásica" --production preprinted --stock-code CLASICA-A6\n' +
      '  npm run admin -- designs add <account> --kind envelope --name "Sobre kraft" --format C6 --stock-code C6-KRAFT --paper-color C8A27A',
  )
  apiCommand(
    context,
    productOptions(
      designs
        .command('update')
        .description("change a design's name or product; letters already accepted keep what they were accepted with")
        .argument('<account>', 'account id')
        .argument('<design>', 'design id')
        .addOption(kindOption())
        .option('--name <name>', "the design's new name"),
    )
      .option('--no-stock-code', 'clear its stock code')
      .option('--no-paper-color', "clear an envelope's paper colour")
      .option('--no-qr', "put a card's QR code back in its default place"),
    (api, account: string, design: string, options: DesignOptions) => {
      const body = designBody(options)
      if (Object.keys(body).length === 0)
        throw usageError(
          'Indica qué cambiar: --name, --format, --production o --qr (tarjeta), --stock-code o --no-stock-code, --paper-color o --no-paper-color (sobre)',
        )
      return api.patch<CardDesign | EnvelopeDesign>(`/admin/accounts/${segment(account)}/${designRoutes[options.kind]}/${segment(design)}`, body)
    },
    renderDesign,
  ).addHelpText(
    'after',
    '\nExamples:\n' +
      '  npm run admin -- designs update <account> <design> --kind card --production preprinted --stock-code CLASICA-A6\n' +
      '  npm run admin -- designs update <account> <design> --kind envelope --no-paper-color',
  )
  apiCommand(
    context,
    designs
      .command('artwork')
      .summary("upload a design's artwork: a card's front or an envelope's logo")
      .description(
        `upload a design's artwork, a new version each time: a card's front at its size plus ${BLEED_MM} mm of bleed on every side (A6: ${cardFormats.A6.width + 2 * BLEED_MM} × ${cardFormats.A6.height + 2 * BLEED_MM} mm; a preprinted card's is shown in proofs and previews, never printed), or an envelope's logo for the sender's corner`,
      )
      .argument('<account>', 'account id')
      .argument('<design>', 'design id')
      .argument('<file>', 'an .svg, .pdf or .png file, sent as it is (its type is taken from the extension)')
      .addOption(kindOption()),
    async (api, account: string, design: string, file: string, options: { kind: DesignKind }) => {
      const path = `/admin/accounts/${segment(account)}/${designRoutes[options.kind]}/${segment(design)}/artwork`
      const artwork = await readArtwork(file, artworkContentTypes, 'el arte de un diseño se sube como SVG, PDF o PNG')
      return api.upload<CardDesign | EnvelopeDesign>(path, artwork.data, artwork.contentType)
    },
    renderDesign,
  ).addHelpText('after', '\nExample:\n  npm run admin -- designs artwork <account> <design> frente.pdf --kind card')
}
