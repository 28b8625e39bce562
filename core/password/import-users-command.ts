/**
 * The `authchart import-users` command: arguments, loading the adapter from the app's config
 * module, and printing the report. The CLI hands in file reading and module loading, so this
 * stays runtime-neutral and testable.
 *
 * ```sh
 * npx authchart import-users users.json --config ./auth.js [--format firebase] [--dry-run] [--keep-ids] [--json]
 * ```
 *
 * @module
 */
import { formatImportReport, importUsers, type ExportFormat, type ImportAdapter } from './import-users.js'

/** What the command needs from its host. */
export interface ImportCommandIo {
  readFile(path: string): Promise<string>
  /** Imports the app's config module (the CLI's loader, TypeScript included). */
  importModule(path: string): Promise<Record<string, unknown>>
  out(text: string): void
  err(text: string): void
}

/** The command's usage text. */
export const IMPORT_USERS_USAGE = `Usage: authchart import-users <export file> --config <module> [options]

Reads a user export into the adapter of your config module (its \`adapter\` export, or its default
export's \`adapter\`). Existing addresses are not created again: what they lack is added.

Options:
  --format better-auth|auth0|firebase  The export's format (default: detected)
  --dry-run                            Read and report, write nothing
  --keep-ids                           Keep the source system's user ids
  --json                               Print the full report as JSON`

const FORMATS: readonly ExportFormat[] = ['better-auth', 'auth0', 'firebase']

interface Arguments {
  file?: string
  config?: string
  format?: ExportFormat
  dryRun: boolean
  keepIds: boolean
  json: boolean
  help: boolean
}

function parse(args: readonly string[]): Arguments | string {
  const parsed: Arguments = { dryRun: false, keepIds: false, json: false, help: false }
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    const [name, inline] = arg.startsWith('--') && arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined]
    const value = () => inline ?? args[++i]
    if (name === '--dry-run') parsed.dryRun = true
    else if (name === '--keep-ids') parsed.keepIds = true
    else if (name === '--json') parsed.json = true
    else if (name === '--help' || name === '-h') parsed.help = true
    else if (name === '--config') parsed.config = value()
    else if (name === '--format') {
      const format = value() as ExportFormat
      if (!FORMATS.includes(format)) return `Unknown format "${format}": use ${FORMATS.join(', ')}`
      parsed.format = format
    } else if (name.startsWith('-')) return `Unknown option "${name}"`
    else if (parsed.file === undefined) parsed.file = name
    else return `Unexpected argument "${name}"`
  }
  return parsed
}

/** The `--config` path among the arguments (the CLI re-runs itself for TypeScript with it). */
export function importConfigPath(args: readonly string[]): string | undefined {
  const parsed = parse(args)
  return typeof parsed === 'string' ? undefined : parsed.config
}

/** Runs `import-users` with the arguments after the command name; resolves to the exit code. */
export async function importUsersCommand(args: readonly string[], io: ImportCommandIo): Promise<number> {
  const parsed = parse(args)
  if (typeof parsed === 'string') {
    io.err(`${parsed}\n\n${IMPORT_USERS_USAGE}`)
    return 1
  }
  if (parsed.help) {
    io.out(IMPORT_USERS_USAGE)
    return 0
  }
  if (!parsed.file || !parsed.config) {
    io.err(IMPORT_USERS_USAGE)
    return 1
  }
  const module = await io.importModule(parsed.config)
  const adapter = (module.adapter ?? (module.default as { adapter?: unknown } | undefined)?.adapter) as ImportAdapter | undefined
  if (!adapter || typeof adapter !== 'object') {
    io.err(`${parsed.config} exports no adapter (an \`adapter\` export, or a default export with \`adapter\`)`)
    return 1
  }
  const report = await importUsers({
    adapter,
    text: await io.readFile(parsed.file),
    ...(parsed.format ? { format: parsed.format } : {}),
    dryRun: parsed.dryRun,
    keepIds: parsed.keepIds,
  })
  io.out(parsed.json ? JSON.stringify(report, null, 2) : formatImportReport(report))
  return report.counts.failed > 0 ? 2 : 0
}
