import type { Command } from 'commander'
import type { Sender, admin } from '@letters/contracts'
import { segment } from '../admin-api.js'
import { recordTable } from '../output.js'
import { apiCommand, spanishList, usageError, type GroupContext } from './shared.js'

/** `senders add` and `senders update` as Commander parses them; `returnAddress: false` is `--no-return-address`. */
interface SenderOptions {
  name?: string
  returnName?: string
  returnCompany?: string
  returnAddress?: string | false
  returnZip?: string
  returnCity?: string
  returnProvince?: string
  returnCountry?: string
  json?: boolean
}

const requiredReturnFields = [
  ['--return-name', 'returnName'],
  ['--return-address', 'returnAddress'],
  ['--return-zip', 'returnZip'],
  ['--return-city', 'returnCity'],
  ['--return-country', 'returnCountry'],
] as const
const optionalReturnFields = [
  ['--return-company', 'returnCompany'],
  ['--return-province', 'returnProvince'],
] as const

/**
 * The sender's return address from the `--return-…` options: undefined when none was given, null
 * for `--no-return-address`. The API replaces an address whole, so a partial one is refused here,
 * naming the options it lacks; the API checks and normalizes the rest.
 */
function returnAddressOf(options: SenderOptions): admin.ReturnAddressBody | null | undefined {
  const given = [...requiredReturnFields, ...optionalReturnFields].filter(([, key]) => options[key] !== undefined && options[key] !== false)
  if (options.returnAddress === false) {
    if (given.length > 0)
      throw usageError(`--no-return-address quita la dirección de remite: no se puede dar junto con ${spanishList(given.map(([flag]) => flag))}`)
    return null
  }
  if (given.length === 0) return undefined
  const missing = requiredReturnFields.filter(([, key]) => options[key] === undefined).map(([flag]) => flag)
  if (missing.length > 0)
    throw usageError(
      `La dirección de remite está incompleta: ${missing.length === 1 ? 'falta' : 'faltan'} ${spanishList(missing)} ` +
        `(se necesitan ${spanishList(requiredReturnFields.map(([flag]) => flag))}; ${spanishList(optionalReturnFields.map(([flag]) => flag))} son opcionales)`,
    )
  return {
    name: options.returnName!,
    ...(options.returnCompany === undefined ? {} : { company: options.returnCompany }),
    address: options.returnAddress!,
    zip: options.returnZip!,
    city: options.returnCity!,
    ...(options.returnProvince === undefined ? {} : { province: options.returnProvince }),
    // The API judges the code, as it judges the other fields.
    country: options.returnCountry! as admin.ReturnAddressBody['country'],
  }
}

function renderSender(sender: Sender): string {
  const address = sender.returnAddress
  return recordTable([
    ['id', sender.id],
    ['name', sender.name],
    [
      'returnAddress',
      address &&
        [address.name, address.company, address.address, `${address.zip} ${address.city}`, address.province, address.countryName].filter(Boolean).join(', '),
    ],
  ])
}

/** The commands of `senders`. */
export function addCommands(senders: Command, context: GroupContext): void {
  /** The return address's options: all of them, but company and province, or none. */
  const returnAddressOptions = (command: Command) =>
    command
      .option('--return-name <name>', 'return address: the name on it, e.g. the shop')
      .option('--return-company <company>', 'return address: a company line (optional)')
      .option('--return-address <street>', 'return address: street and number')
      .option('--return-zip <zip>', 'return address: postal code')
      .option('--return-city <city>', 'return address: city')
      .option('--return-province <province>', 'return address: province (optional)')
      .option('--return-country <country>', 'return address: ISO 3166-1 country code, e.g. ES')
  const returnAddressExample = '--return-name "Papelería Luna" --return-address "Calle Sierpes 4" --return-zip 41004 --return-city Sevilla --return-country ES'
  apiCommand(
    context,
    returnAddressOptions(
      senders
        .command('add')
        .description('add a sender to an account, with a return address (checked and normalized by the API) or without one')
        .argument('<account>', 'account id')
        .requiredOption('--name <name>', "the sender's name, as it signs"),
    ),
    (api, account: string, options: SenderOptions) => {
      const returnAddress = returnAddressOf(options)
      return api.post<Sender>(`/admin/accounts/${segment(account)}/senders`, {
        name: options.name,
        ...(returnAddress === undefined ? {} : { returnAddress }),
      })
    },
    renderSender,
  ).addHelpText('after', `\nExample:\n  npm run admin -- senders add <account> --name "Lucía" ${returnAddressExample}`)
  apiCommand(
    context,
    returnAddressOptions(
      senders
        .command('update')
        .description("change a sender's name or return address (the address is replaced whole: give all its fields)")
        .argument('<account>', 'account id')
        .argument('<sender>', 'sender id')
        .option('--name <name>', "the sender's new name"),
    ).option('--no-return-address', 'remove its return address'),
    (api, account: string, sender: string, options: SenderOptions) => {
      const returnAddress = returnAddressOf(options)
      const body = { ...(options.name === undefined ? {} : { name: options.name }), ...(returnAddress === undefined ? {} : { returnAddress }) }
      if (Object.keys(body).length === 0) throw usageError('Indica qué cambiar: --name, la dirección de remite (--return-…) o --no-return-address')
      return api.patch<Sender>(`/admin/accounts/${segment(account)}/senders/${segment(sender)}`, body)
    },
    renderSender,
  ).addHelpText(
    'after',
    `\nExamples:\n  npm run admin -- senders update <account> <sender> ${returnAddressExample}\n  npm run admin -- senders update <account> <sender> --no-return-address`,
  )
}
