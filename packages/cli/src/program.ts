import { Command } from 'commander'
import { DEFAULT_LETTERS_URL, loadConfig, type CliEnvironment } from '@letters/config'
import { CliError } from './admin-api.js'
import type { GroupContext } from './commands/shared.js'
import { recordTable, type Io } from './output.js'

/**
 * The groups of commands, in the order the help lists them, and what each is for. `--help` needs
 * no more than this: the commands of a group (commands/<group>.ts), and the contracts they print,
 * which take most of the CLI's start, load only for the group a command line names.
 */
export const groups = {
  accounts: 'open and look at client accounts',
  users: 'invite the people of an account to the dashboard',
  keys: "issue and revoke an account's API keys",
  credits: "move an account's credits",
  designs: "an account's card and envelope designs: the products its letters are made of, and their artwork",
  senders: "an account's senders: the name that signs a letter and the return address on its envelope",
  signatures: "an account's signatures, drawn under a letter's message",
  fonts: "an account's own handwriting fonts: created by name, then given a file",
  campaigns: "an account's campaigns",
  letters: 'look at letters and act on them for ops',
  suppressions: "an account's suppression list: addresses a letter came back from, which its new letters are refused for",
} as const
export type GroupName = keyof typeof groups

/** Each group's module, imported only when a command line names the group: one module's contracts, not every group's. */
const groupModules: Record<GroupName, () => Promise<{ addCommands: (group: Command, context: GroupContext) => void }>> = {
  accounts: () => import('./commands/accounts.js'),
  users: () => import('./commands/users.js'),
  keys: () => import('./commands/keys.js'),
  credits: () => import('./commands/credits.js'),
  designs: () => import('./commands/designs.js'),
  senders: () => import('./commands/senders.js'),
  signatures: () => import('./commands/signatures.js'),
  fonts: () => import('./commands/fonts.js'),
  campaigns: () => import('./commands/campaigns.js'),
  letters: () => import('./commands/letters.js'),
  suppressions: () => import('./commands/suppressions.js'),
}

const isGroup = (name: string | undefined): name is GroupName => name !== undefined && Object.hasOwn(groups, name)

/**
 * The group a command line names: `letters list …`, or `help letters`. The program itself takes
 * no option but --help, so that is its first word that is not a flag.
 */
function namedGroup(args: string[]): GroupName | undefined {
  const words = args.filter((arg) => !arg.startsWith('-'))
  const name = words[0] === 'help' ? words[1] : words[0]
  return isGroup(name) ? name : undefined
}

/** What a command's usage errors end with: its commands, when it has some (an unknown one was typed), and where the help is. */
function usageHint(command: Command): string {
  const names = command.commands.map((sub) => sub.name()).filter((name) => name !== 'help')
  return `${names.length > 0 ? `The commands of ${[command.parent?.name(), command.name()].filter(Boolean).join(' ')}: ${names.join(', ')}\n` : ''}(add --help for usage)`
}

/**
 * The command tree for the command line `args` (the words after the script): every group with
 * its description, and the commands of the group `args` names (see `groups`).
 */
export async function buildProgram(settings: CliEnvironment, io: Io, args: string[]): Promise<Command> {
  const program = new Command('admin')
    .description(`Operator CLI over the letters admin API (LETTERS_URL, default ${DEFAULT_LETTERS_URL}; ADMIN_TOKEN). Run it as: npm run admin -- <command>`)
    .configureOutput({ writeOut: (text) => io.out(text), writeErr: (text) => io.err(text) })
    // Errors end the process in main.ts, with 2 for a usage error: a test or a script sees the code.
    .exitOverride()
    .showHelpAfterError('(add --help for usage)')

  const named = namedGroup(args)
  const commands = named === undefined ? undefined : await groupModules[named]()
  for (const [name, description] of Object.entries(groups)) {
    const group = program.command(name).description(description)
    if (name === named) commands!.addCommands(group, { settings, io })
  }

  program
    .command('migrate')
    .description('apply the pending database migrations to DATABASE_URL (one run at a time, under a lock); the services never migrate by themselves')
    .option('--status', 'only say where the database stands; exit 1 while migrations are pending')
    .action(async (options: { status?: boolean }) => {
      // Only this command talks to Postgres: the others load no database driver.
      const db = await import('@letters/db')
      // The default when unset, and the rules past the variable's own (a ?max= refused): a
      // ConfigError is said as run() says a malformed variable.
      const url = loadConfig({ DATABASE_URL: settings.databaseUrl }).databaseUrl
      const where = new URL(url)
      const target = `${where.host}${where.pathname}`
      if (options.status) {
        const status = await db.schemaStatus(url)
        io.out(
          recordTable([
            ['database', target],
            ['current', status.current ?? '(vacía)'],
            ['pending', status.pending.length === 0 ? 'ninguna' : status.pending.join(', ')],
            ['newer', status.newer],
            ['compatibleFrom', status.compatibleFrom ?? '-'],
          ]),
        )
        if (status.pending.length > 0) throw new CliError(`Faltan ${status.pending.length} migraciones: ejecuta npm run migrate.`)
        return
      }
      const applied = await db.prepareDatabase(url, { onProgress: (message) => io.out(message) })
      io.out(
        applied.length === 0
          ? `${target}: el esquema ya estaba al día (${db.requiredMigration()}).`
          : `${target}: ${applied.length} migraciones aplicadas; el esquema está en ${db.requiredMigration()}.`,
      )
    })
    .addHelpText('after', '\nExamples:\n  DATABASE_URL=postgres://… npm run migrate\n  npm run admin -- migrate --status')

  // Set once the tree is whole, so that only these two say it (a command copies its parent's
  // settings when it is made): an unknown command is named, and the ones there are listed.
  program.showHelpAfterError(usageHint(program))
  if (named !== undefined) {
    const group = program.commands.find((command) => command.name() === named)!
    group.showHelpAfterError(usageHint(group))
  }
  return program
}
