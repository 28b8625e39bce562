#!/usr/bin/env node
/**
 * `authchart` command line:
 *
 * ```sh
 * npx authchart secret                     # a fresh AUTH_SECRET
 * npx authchart diagram <flow> [--format svg|mermaid|json] [--config path]
 * npx authchart flows [--config path]
 * npx authchart import-users <export file> --config path [--dry-run] [--format …]
 * ```
 *
 * `--config` names a module of the application: its `extensions` (or its default export's, an
 * `AuthConfig`) are inserted into the sign-in completion, and its `flows` export (machines, or flow
 * definitions with a `machine`) adds flows or replaces built-in ones with the same id, so a flow is
 * drawn as the application runs it. A TypeScript module (`./auth.ts`) loads on Node ≥ 22.6 through
 * its type stripping; on older Node the CLI says to run it under tsx.
 *
 * @module
 */
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { extname, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import type { AnyStateMachine } from 'xstate'
import { importConfigPath, importUsersCommand } from '../core/password/import-users-command.js'
import { buildSignInCompletion, type CompletionExtension } from '../machines/signin-completion.machine.js'
import { builtInMachines, diagram, type DiagramFormat } from './flows.js'
import { typeScriptLoading } from './typescript-loading.js'

const USAGE = `Usage: authchart <command> [options]

Commands:
  secret                     Print a fresh AUTH_SECRET (32 random bytes, base64url)
  flows                      List the flows, each with what it does
  diagram <flow>             Print a flow's diagram (svg, mermaid or json)
  import-users <file>        Import a better-auth, Auth0 or Firebase user export (--help for its options)

Options:
  --format svg|mermaid|json  The diagram's format (default svg)
  --config <module>          Your config module: its extensions and flows are drawn in
                             (.js/.mjs anywhere; .ts on Node >= 22.6, else run under tsx)
  -h, --help                 Show this help

Examples:
  export AUTH_SECRET=$(npx authchart secret)
  npx authchart diagram oauth-signin --format mermaid
  npx authchart flows --config ./auth.ts`

const TYPESCRIPT_EXTENSIONS = new Set(['.ts', '.mts', '.cts'])
/** Set on the re-run with `--experimental-strip-types`, so it happens once. */
const STRIPPING = 'AUTHCHART_CLI_STRIP_TYPES'

/**
 * For a TypeScript `--config` on a Node that needs the flag: runs this command again with it and
 * returns its exit code; `undefined` when this process tries the import itself.
 */
function rerunForTypeScript(configPath: string | undefined, argv: string[]): number | undefined {
  if (!configPath || !TYPESCRIPT_EXTENSIONS.has(extname(configPath)) || process.env[STRIPPING]) return undefined
  // Natively, or not at all: the import is tried (a loader such as tsx may be registered).
  if (typeScriptLoading(process.version, process.features as { typescript?: unknown }) !== 'flag') return undefined
  const rerun = spawnSync(process.execPath, ['--experimental-strip-types', '--disable-warning=ExperimentalWarning', process.argv[1]!, ...argv], {
    stdio: 'inherit',
    env: { ...process.env, [STRIPPING]: '1' },
  })
  return rerun.status ?? 1
}

/**
 * A fresh secret for `AUTH_SECRET`: 32 random bytes, base64url (43 characters, above the
 * 32-character minimum), as Auth.js's `npx auth secret` makes them.
 */
function newSecret(): string {
  return randomBytes(32).toString('base64url')
}

const isMachine = (value: unknown): value is AnyStateMachine =>
  typeof value === 'object' && value !== null && 'root' in value && 'id' in value && 'transition' in value

/**
 * Imports the application's config module.
 *
 * @throws {Error} for a TypeScript module this Node cannot load, saying what to run instead.
 */
async function importConfig(configPath: string): Promise<Record<string, unknown>> {
  try {
    return (await import(pathToFileURL(resolve(configPath)).href)) as Record<string, unknown>
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'ERR_UNKNOWN_FILE_EXTENSION' || !TYPESCRIPT_EXTENSIONS.has(extname(configPath))) throw error
    throw new Error(
      `${configPath} is TypeScript, which Node ${process.version} cannot load (Node >= 22.6 can). Run the command under tsx:\n` +
        `  npx tsx node_modules/authchart/dist/visualizations/cli.js ${process.argv.slice(2).join(' ')}\n` +
        'or give --config a JavaScript module.',
      { cause: error },
    )
  }
}

/** The flows known to the CLI: built-in ones, then the config module's `flows` by id. */
async function knownFlows(configPath: string | undefined): Promise<Map<string, AnyStateMachine>> {
  const flows = new Map(builtInMachines.map((machine) => [machine.id, machine]))
  if (configPath) {
    const module = await importConfig(configPath)
    const config = module.default as Record<string, unknown> | undefined
    const extensions = (module.extensions ?? config?.extensions ?? []) as CompletionExtension[]
    if (extensions.length > 0) {
      const extended = buildSignInCompletion(extensions)
      flows.set(extended.id, extended)
    }
    const declared = (module.flows ?? (module.default as Record<string, unknown> | undefined)?.flows ?? []) as unknown[]
    for (const entry of declared) {
      const machine = isMachine(entry) ? entry : (entry as { machine?: unknown })?.machine
      if (!isMachine(machine)) throw new TypeError(`${configPath}: every entry of \`flows\` must be a machine or have one`)
      flows.set(machine.id, machine)
    }
  }
  return flows
}

async function main(argv: string[]): Promise<number> {
  if (argv[0] === 'import-users') {
    const io = { readFile: (path: string) => readFile(path, 'utf8'), importModule: importConfig, out: console.log, err: console.error }
    return rerunForTypeScript(importConfigPath(argv.slice(1)), argv) ?? importUsersCommand(argv.slice(1), io)
  }
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      format: { type: 'string', default: 'svg' },
      config: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  })
  const [command, flowId] = positionals
  if (values.help || command === 'help' || !command) {
    ;(values.help || command === 'help' ? console.log : console.error)(USAGE)
    return values.help || command === 'help' ? 0 : 1
  }
  if (command === 'secret') {
    // The secret alone on stdout (so `AUTH_SECRET=$(npx authchart secret)` works); the hint on stderr.
    console.log(newSecret())
    console.error('Set it as AUTH_SECRET (or the `secret` option). Keep it out of version control.')
    return 0
  }
  if (command !== 'flows' && command !== 'diagram') {
    console.error(`Unknown command "${command}".\n\n${USAGE}`)
    return 1
  }
  const rerun = rerunForTypeScript(values.config, argv)
  if (rerun !== undefined) return rerun
  const flows = await knownFlows(values.config)
  if (command === 'flows') {
    const width = Math.max(...[...flows.keys()].map((id) => id.length))
    for (const [id, machine] of flows) {
      const description = machine.root.description ?? ''
      console.log(description ? `${id.padEnd(width)}  ${description}` : id)
    }
    return 0
  }
  if (command !== 'diagram' || !flowId) {
    console.error(USAGE)
    return 1
  }
  const machine = flows.get(flowId)
  if (!machine) {
    console.error(`Unknown flow "${flowId}". Known flows: ${[...flows.keys()].join(', ')}`)
    return 1
  }
  const format = values.format as DiagramFormat
  if (!['svg', 'mermaid', 'json'].includes(format)) {
    console.error(`Unknown format "${format}": use svg, mermaid or json`)
    return 1
  }
  process.stdout.write(await diagram(machine, format))
  return 0
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code
  },
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : String(error))
    process.exitCode = 1
  },
)
