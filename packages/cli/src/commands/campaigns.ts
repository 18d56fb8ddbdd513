import { readFile } from 'node:fs/promises'
import type { Command } from 'commander'
import type { admin } from '@letters/contracts'
import { CliError, segment } from '../admin-api.js'
import { listTable, recordTable } from '../output.js'
import { apiCommand, unreadable, type GroupContext } from './shared.js'

/** The JSON body of `campaigns add --file`. */
async function readJsonFile(path: string): Promise<unknown> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (error) {
    throw unreadable(error, path, 'un fichero JSON')
  }
  try {
    return JSON.parse(text) as unknown
  } catch (error) {
    throw new CliError(`El fichero '${path}' no es un JSON válido: ${(error as Error).message}`)
  }
}

/** The commands of `campaigns`. */
export function addCommands(campaigns: Command, context: GroupContext): void {
  apiCommand(
    context,
    campaigns
      .command('add')
      .description('add a campaign to an account, its body (POST /admin/accounts/{id}/campaigns) read from a JSON file')
      .argument('<account>', 'account id')
      .requiredOption('--file <file>', 'the campaign as JSON: { name, cardDesignId, envelopeDesignId, senderId, fontName?, message, variables }'),
    async (api, account: string, options: { file: string; json?: boolean }) =>
      api.post<admin.Campaign>(`/admin/accounts/${segment(account)}/campaigns`, await readJsonFile(options.file)),
    (campaign) =>
      `${recordTable([
        ['id', campaign.id],
        ['name', campaign.name],
        ['active', campaign.active],
      ])}\n` +
      listTable(
        ['variable', 'maxSize', 'defaultValue', 'example'],
        campaign.variables.map((variable) => [variable.name, variable.maxSize, variable.defaultValue, variable.example]),
      ),
  )
}
