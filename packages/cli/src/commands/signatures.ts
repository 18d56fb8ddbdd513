import type { Command } from 'commander'
import type { ArtworkContentType, Signature } from '@letters/contracts'
import { segment } from '../admin-api.js'
import { recordTable } from '../output.js'
import { apiCommand, artworkRows, readArtwork, type GroupContext } from './shared.js'

/** A signature is drawn by a pen or printed as an image: paths in an SVG, or a PNG; never a PDF. */
const signatureContentTypes: readonly ArtworkContentType[] = ['image/svg+xml', 'image/png']

function renderSignature(signature: Signature): string {
  return recordTable([['id', signature.id], ['name', signature.name], ...artworkRows(signature.artwork)])
}

/** The commands of `signatures`. */
export function addCommands(signatures: Command, context: GroupContext): void {
  apiCommand(
    context,
    signatures
      .command('add')
      .description('add a signature to an account (its drawing comes after, with signatures artwork)')
      .argument('<account>', 'account id')
      .requiredOption('--name <name>', "the signature's name"),
    (api, account: string, options: { name: string; json?: boolean }) =>
      api.post<Signature>(`/admin/accounts/${segment(account)}/signatures`, { name: options.name }),
    renderSignature,
  )
  apiCommand(
    context,
    signatures
      .command('artwork')
      .summary("upload a signature's drawing")
      .description("upload a signature's drawing, a new version each time: an SVG of paths only (what the plotter draws) or a transparent PNG")
      .argument('<account>', 'account id')
      .argument('<signature>', 'signature id')
      .argument('<file>', 'an .svg or .png file, sent as it is (its type is taken from the extension)'),
    async (api, account: string, signature: string, file: string) => {
      const path = `/admin/accounts/${segment(account)}/signatures/${segment(signature)}/artwork`
      const artwork = await readArtwork(file, signatureContentTypes, 'una firma se sube como SVG de trazos o PNG')
      return api.upload<Signature>(path, artwork.data, artwork.contentType)
    },
    renderSignature,
  ).addHelpText('after', '\nExample:\n  npm run admin -- signatures artwork <account> <signature> firma.svg')
}
